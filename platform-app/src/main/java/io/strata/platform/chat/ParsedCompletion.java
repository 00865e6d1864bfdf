package io.strata.platform.chat;

import java.util.List;

/**
 * A generated assistant message split into its parts.
 *
 * @param reasoningContent the text before {@code </think>} (thinking mode; "" in chat mode)
 * @param content          the answer, without the blank line that precedes a tool-call block
 * @param toolCalls        the calls of the DSML block, arguments as JSON object text
 * @param endOfSequence    whether the text reached {@code <｜end▁of▁sentence｜>} (anything after it is ignored)
 */
public record ParsedCompletion(String reasoningContent, String content, List<ToolCall> toolCalls, boolean endOfSequence) {

    public ParsedCompletion {
        toolCalls = List.copyOf(toolCalls);
    }

    /** The message as it goes into a chat response (and back into a later request's history). */
    public ChatMessage toMessage() {
        return ChatMessage.assistant(content, reasoningContent.isEmpty() ? null : reasoningContent,
                toolCalls.isEmpty() ? null : toolCalls);
    }
}
