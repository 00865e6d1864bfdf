package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Scheduler limits ({@code strata.scheduler.*}), named after vLLM's flags.
 *
 * @param maxNumBatchedTokens token budget of one engine step (prefill chunks + decode tokens)
 * @param maxNumSeqs          most sequences running at once
 * @param maxQueuedRequests   choices waiting + running beyond which new requests get 503
 * @param maxQueuedTokens     prompt tokens not yet prefilled beyond which new requests get 503
 * @param policy              {@code fcfs} (default) or {@code priority} (lower {@code priority} value first;
 *                            the preemption victim is the lowest-priority, newest running sequence)
 */
@ConfigurationProperties("strata.scheduler")
public record EngineProperties(Integer maxNumBatchedTokens, Integer maxNumSeqs, Integer maxQueuedRequests,
                               Long maxQueuedTokens, String policy) {
    public EngineProperties {
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

    public boolean priorityPolicy() {
        return policy.equals("priority");
    }
}
