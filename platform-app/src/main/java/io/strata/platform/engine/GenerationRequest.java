package io.strata.platform.engine;

import io.strata.platform.engine.sampling.SamplingParams;

/**
 * One choice to generate. A request with {@code n > 1} becomes n of these sharing the prompt, so the
 * later ones hit the prefix cache of the first.
 *
 * @param requestId    unique id (also the request-log id suffix)
 * @param promptTokens prompt ids, already checked against the context length
 * @param params       validated sampling parameters with {@code maxTokens} resolved
 * @param priority     lower runs first when the priority policy is on; 0 otherwise
 * @param cacheSalt    mixed into prefix-cache hashes so tenants cannot probe each other's cache; may be null
 */
public record GenerationRequest(String requestId, int[] promptTokens, SamplingParams params, int priority,
                                String cacheSalt) {
}
