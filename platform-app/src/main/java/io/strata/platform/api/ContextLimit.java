package io.strata.platform.api;

/** Prompt + output must fit the model's context; the message mirrors OpenAI's and vLLM's wording. */
final class ContextLimit {
    private ContextLimit() {
    }

    /** @return the output budget: {@code requested} or, when absent, whatever the context leaves */
    static int resolveMaxTokens(int promptTokens, Integer requested, int maxModelLen) {
        int wanted = requested == null ? Math.max(1, maxModelLen - promptTokens) : requested;
        if (promptTokens + wanted > maxModelLen) {
            throw ApiException.invalid("input_tokens", "This model's maximum context length is " + maxModelLen
                    + " tokens. However, you requested " + wanted + " output tokens and your prompt contains "
                    + promptTokens + " input tokens, for a total of " + (promptTokens + wanted)
                    + " tokens. Please reduce the length of the input prompt or the number of requested output tokens.");
        }
        return wanted;
    }
}
