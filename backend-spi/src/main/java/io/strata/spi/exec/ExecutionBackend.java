package io.strata.spi.exec;

import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;

/**
 * Implemented by a backend plugin's extension (next to {@link io.strata.spi.BackendProvider}) when it can
 * execute models. The engine checks {@code provider instanceof ExecutionBackend}.
 */
public interface ExecutionBackend {

    /** Limits and formats, without a model loaded; must not allocate device memory. */
    BackendCapabilities capabilities();

    /**
     * Loads a model. The checkpoint stays open (memory-mapped) for the executor's lifetime; the caller
     * closes it after closing the executor.
     *
     * @throws IllegalArgumentException naming the tensor or config key when the model cannot run here
     */
    ModelExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options);

    /**
     * Which backend serves when {@code strata.backend} names none: the available one with the highest
     * priority. The CPU backend is 0; an accelerator backend ranks above it.
     */
    default int priority() {
        return 0;
    }
}
