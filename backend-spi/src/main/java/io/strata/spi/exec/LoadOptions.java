package io.strata.spi.exec;

/**
 * How the engine wants a model loaded.
 *
 * @param modelId          the served model's id (logging, metrics)
 * @param maxBatchTokens   most tokens the engine will put in one step (sizes scratch buffers)
 * @param maxBatchRequests most requests per step
 * @param threads          worker threads for CPU-side work; 0 = the backend's default
 */
public record LoadOptions(String modelId, int maxBatchTokens, int maxBatchRequests, int threads) {
    public LoadOptions {
        if (maxBatchTokens <= 0 || maxBatchRequests <= 0 || threads < 0) {
            throw new IllegalArgumentException("maxBatchTokens and maxBatchRequests must be positive, threads >= 0");
        }
    }
}
