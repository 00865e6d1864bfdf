package io.strata.platform.engine.sampling;

/**
 * One sampled token.
 *
 * @param token   the chosen id
 * @param logprob its log-probability under the model's raw distribution; NaN when logprobs were not asked for
 * @param rank    1 + how many tokens the model found likelier (vLLM's rank); 0 when logprobs were not asked for
 * @param top     the top alternatives when asked for, else {@link TopLogprobs#NONE}
 */
public record SampledToken(int token, float logprob, int rank, TopLogprobs top) {
    public boolean hasLogprob() {
        return !Float.isNaN(logprob);
    }
}
