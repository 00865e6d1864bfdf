package io.strata.platform.chat;

import tools.jackson.databind.JsonNode;

/**
 * How to render a conversation.
 *
 * @param mode            chat ({@code </think>} after the assistant tag) or thinking ({@code <think>})
 * @param reasoningEffort null or a level; {@link ReasoningEffort#MAX} adds the effort paragraph
 * @param dropThinking    drop the reasoning of assistant turns before the last user turn (DeepSeek's
 *                        default; ignored — i.e. reasoning kept — when the request defines tools)
 * @param responseFormat  the request's {@code response_format} object, or null; rendered into the
 *                        system prompt as DeepSeek's encoder does
 * @param continueFinalMessage the conversation ends with a partial assistant message that the model
 *                        continues (vLLM's {@code continue_final_message}): it is rendered without EOS
 */
public record ChatEncodingOptions(ThinkingMode mode, ReasoningEffort reasoningEffort, boolean dropThinking,
                                  JsonNode responseFormat, boolean continueFinalMessage) {

    public ChatEncodingOptions {
        if (mode == null) {
            throw new ChatFormatException("thinking mode is required");
        }
    }

    public static ChatEncodingOptions chat() {
        return new ChatEncodingOptions(ThinkingMode.CHAT, null, true, null, false);
    }

    public static ChatEncodingOptions thinking() {
        return new ChatEncodingOptions(ThinkingMode.THINKING, null, true, null, false);
    }

    public ChatEncodingOptions withReasoningEffort(ReasoningEffort effort) {
        return new ChatEncodingOptions(mode, effort, dropThinking, responseFormat, continueFinalMessage);
    }

    public ChatEncodingOptions withDropThinking(boolean drop) {
        return new ChatEncodingOptions(mode, reasoningEffort, drop, responseFormat, continueFinalMessage);
    }

    public ChatEncodingOptions withResponseFormat(JsonNode format) {
        return new ChatEncodingOptions(mode, reasoningEffort, dropThinking, format, continueFinalMessage);
    }

    public ChatEncodingOptions withContinueFinalMessage(boolean continueFinal) {
        return new ChatEncodingOptions(mode, reasoningEffort, dropThinking, responseFormat, continueFinal);
    }
}
