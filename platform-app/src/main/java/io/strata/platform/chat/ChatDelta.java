package io.strata.platform.chat;

import java.util.List;

/**
 * What one chunk of generated text added: reasoning text, answer text and tool-call pieces (each
 * possibly empty, never null). Within one delta, reasoning precedes content precedes tool calls.
 */
public record ChatDelta(String reasoningContent, String content, List<ToolCallDelta> toolCalls) {

    public static final ChatDelta EMPTY = new ChatDelta("", "", List.of());

    public ChatDelta {
        toolCalls = List.copyOf(toolCalls);
    }

    public boolean isEmpty() {
        return reasoningContent.isEmpty() && content.isEmpty() && toolCalls.isEmpty();
    }
}
