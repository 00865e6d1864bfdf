package io.strata.spi.exec;

import io.strata.kv.IndexerKvDtype;
import io.strata.kv.KvLayout;
import io.strata.kv.MainKvDtype;
import io.strata.model.config.ModelConfig;

import java.util.Set;

/**
 * What an execution backend reports about itself, before and after loading a model.
 *
 * @param kvMemoryBytes     bytes the backend can devote to KV pages now (after weights, if loaded)
 * @param mainKvDtypes      supported main/SWA entry formats
 * @param indexerKvDtypes   supported indexer key formats
 * @param graphCapture      whether decode steps of a fixed shape can be captured and replayed (CUDA graphs)
 * @param maxBatchTokens    most tokens (prefill + decode, all requests) one step may carry
 * @param maxBatchRequests  most requests one step may carry
 */
public record BackendCapabilities(long kvMemoryBytes, Set<MainKvDtype> mainKvDtypes,
                                  Set<IndexerKvDtype> indexerKvDtypes, boolean graphCapture, int maxBatchTokens,
                                  int maxBatchRequests) {
    public BackendCapabilities {
        mainKvDtypes = Set.copyOf(mainKvDtypes);
        indexerKvDtypes = Set.copyOf(indexerKvDtypes);
        if (kvMemoryBytes < 0 || maxBatchTokens <= 0 || maxBatchRequests <= 0) {
            throw new IllegalArgumentException("capabilities need kvMemoryBytes >= 0 and positive batch limits");
        }
    }

    /**
     * Refuses a KV layout the backend cannot hold: entry formats it does not read, or a layout built for another
     * model's shape ({@code backend} names it in the message).
     *
     * @throws IllegalArgumentException saying which formats the backend reads and what to set
     */
    public void requireLayout(KvLayout layout, ModelConfig config, String backend) {
        if (!mainKvDtypes.contains(layout.precision().main()) || !indexerKvDtypes.contains(layout.precision().indexer())) {
            throw new IllegalArgumentException("KV precision " + layout.precision() + " is not supported by the "
                + backend + " backend (it reads main entries " + mainKvDtypes + " and indexer keys "
                + indexerKvDtypes + "; set strata.kv.dtype)");
        }
        if (!layout.shape().ratios().equals(config.compressRatios())
            || layout.shape().headDim() != config.attention().headDim()) {
            throw new IllegalArgumentException("KV layout " + layout.shape().modelId() + " does not match the loaded model");
        }
    }
}
