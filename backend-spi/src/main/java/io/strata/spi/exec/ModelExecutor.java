package io.strata.spi.exec;

import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;
import io.strata.model.config.ModelConfig;

import java.util.Map;

/**
 * A model loaded on a backend. Steps are executed one at a time (the engine serialises them); a backend
 * may overlap work inside a step as it likes.
 */
public interface ModelExecutor extends AutoCloseable {

    ModelConfig config();

    /** Capabilities with the model loaded ({@code kvMemoryBytes} is what is left after the weights). */
    BackendCapabilities capabilities();

    /** Bytes of weights resident for this model. */
    long weightBytes();

    /**
     * Allocates (or replaces) the KV pools: for each bucket of the layout, {@code pages} rows of
     * {@code layout.bucket(b).rowBytes()} bytes. Page indices in block tables refer to these rows.
     *
     * @throws IllegalArgumentException when the layout's formats are not supported or memory is short
     */
    KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages);

    /**
     * Runs one engine step.
     *
     * @throws IllegalStateException    when no KV pools are allocated
     * @throws IllegalArgumentException naming the request and field when the batch is inconsistent
     */
    StepResult execute(StepBatch batch);

    /** Accelerator memory, for backends that run on a device; empty for host-memory backends. */
    default java.util.Optional<DeviceMemory> deviceMemory() {
        return java.util.Optional.empty();
    }

    @Override
    void close();
}
