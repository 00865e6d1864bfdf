package io.strata.platform.chat;

/** An OpenAI tool call: {@code {"id", "type": "function", "function": {"name", "arguments"}}}. */
public record ToolCall(String id, String type, FunctionCall function) {

    public static ToolCall function(String id, String name, String arguments) {
        return new ToolCall(id, "function", new FunctionCall(name, arguments));
    }
}
