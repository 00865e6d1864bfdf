package io.strata.platform.chat;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One message of an OpenAI chat request or response, field for field: {@code role} (system, developer,
 * user, assistant, tool), {@code content} (string or text parts; null for an assistant turn that only
 * calls tools), {@code name}, {@code tool_calls}, {@code tool_call_id}, {@code reasoning_content}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record ChatMessage(
        String role,
        MessageContent content,
        String name,
        @JsonProperty("tool_calls") List<ToolCall> toolCalls,
        @JsonProperty("tool_call_id") String toolCallId,
        @JsonProperty("reasoning_content") String reasoningContent) {

    public ChatMessage {
        toolCalls = toolCalls == null ? null : List.copyOf(toolCalls);
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", MessageContent.of(content), null, null, null, null);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", MessageContent.of(content), null, null, null, null);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", MessageContent.of(content), null, null, null, null);
    }

    public static ChatMessage assistant(String content, String reasoningContent, List<ToolCall> toolCalls) {
        return new ChatMessage("assistant", content == null ? null : MessageContent.of(content), null,
                toolCalls, null, reasoningContent);
    }

    public static ChatMessage tool(String toolCallId, String content) {
        return new ChatMessage("tool", MessageContent.of(content), null, null, toolCallId, null);
    }
}
