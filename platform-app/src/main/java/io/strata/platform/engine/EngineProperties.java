package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;

/**
 * Scheduler limits ({@code strata.scheduler.*}), named after vLLM's flags.
 *
 * @param maxNumBatchedTokens token budget of one engine step (prefill chunks + decode tokens)
 * @param maxNumSeqs          most sequences running at once
 * @param maxQueuedRequests   choices waiting + running beyond which new requests get 503
 * @param maxQueuedTokens     prompt tokens not yet prefilled beyond which new requests get 503
 * @param policy              {@code fcfs} (default) or {@code priority} (lower {@code priority} value first;
 *                            the preemption victim is the lowest-priority, newest running sequence)
 * @param longPrefillTokenThreshold most prompt tokens one sequence prefills per step (vLLM's name); 0 (the
 *                            default) = up to the step budget. Backends attend within a chunk from its own
 *                            activations and persist only mapped window slots; the KV manager maps the last
 *                            window before every 256-position boundary a chunk crosses, so long chunks keep
 *                            prefix hits at every boundary. Set 128 (the window) only for a backend that needs
 *                            every window position of a chunk to have a page.
 */
@ConfigurationProperties("strata.scheduler")
public record EngineProperties(Integer maxNumBatchedTokens, Integer maxNumSeqs, Integer maxQueuedRequests,
                               Long maxQueuedTokens, String policy, Integer longPrefillTokenThreshold) {

    public EngineProperties(Integer maxNumBatchedTokens, Integer maxNumSeqs, Integer maxQueuedRequests,
                            Long maxQueuedTokens, String policy) {
        this(maxNumBatchedTokens, maxNumSeqs, maxQueuedRequests, maxQueuedTokens, policy, null);
    }

    @ConstructorBinding
    public EngineProperties {
        longPrefillTokenThreshold = longPrefillTokenThreshold == null ? 0 : longPrefillTokenThreshold;
        if (longPrefillTokenThreshold < 0) {
            throw new IllegalArgumentException("strata.scheduler.long-prefill-token-threshold must be >= 0");
        }
        maxNumBatchedTokens = maxNumBatchedTokens == null ? 2048 : maxNumBatchedTokens;
        maxNumSeqs = maxNumSeqs == null ? 128 : maxNumSeqs;
        maxQueuedRequests = maxQueuedRequests == null ? 1024 : maxQueuedRequests;
        maxQueuedTokens = maxQueuedTokens == null ? 1L << 22 : maxQueuedTokens;
        policy = policy == null || policy.isBlank() ? "fcfs" : policy.trim().toLowerCase();
        if (maxNumBatchedTokens < 1 || maxNumSeqs < 1 || maxQueuedRequests < 1 || maxQueuedTokens < 1) {
            throw new IllegalArgumentException("strata.scheduler limits must be positive");
        }
        if (!policy.equals("fcfs") && !policy.equals("priority")) {
            throw new IllegalArgumentException("strata.scheduler.policy must be 'fcfs' or 'priority', got '" + policy + "'");
        }
    }

    /** Most prompt positions one sequence computes in a step when it runs alone. */
    public int chunkLimit() {
        return longPrefillTokenThreshold > 0 ? Math.min(longPrefillTokenThreshold, maxNumBatchedTokens) : maxNumBatchedTokens;
    }

    public boolean priorityPolicy() {
        return policy.equals("priority");
    }
}
