package io.strata.platform.engine.sampling;

/**
 * The most likely tokens at one position with their log-probabilities, most likely first.
 * Arrays are owned by this value; callers must not change them.
 */
public record TopLogprobs(int[] tokens, float[] logprobs) {
    public static final TopLogprobs NONE = new TopLogprobs(new int[0], new float[0]);

    public int size() {
        return tokens.length;
    }
}
