package io.strata.platform.engine;

import io.strata.platform.engine.sampling.SampledToken;

import java.util.List;

/** What the engine tells the API about one choice, in order: Started, Delta*, then Finished. */
public sealed interface GenerationEvent {

    /**
     * The choice was admitted and its prompt prefilled far enough to know the cache hit.
     *
     * @param promptLogprobs one entry per prompt position (the first is null: nothing predicts it), or null
     */
    record Started(int promptTokens, int cachedTokens, long queueNanos, List<SampledToken> promptLogprobs)
            implements GenerationEvent {
    }

    /** New tokens and the text they completed (text may be empty while a stop string or UTF-8 sequence is pending). */
    record Delta(int[] tokens, String text, List<SampledToken> logprobs) implements GenerationEvent {
    }

    /**
     * The choice ended. {@code stopReason} is the matched stop string or stop token id (vLLM's
     * {@code stop_reason}); {@code error} is set when {@code reason} is ERROR.
     */
    record Finished(FinishReason reason, Object stopReason, int promptTokens, int cachedTokens,
                    int completionTokens, String error) implements GenerationEvent {
    }
}
