package io.strata.platform.chat;

/**
 * A streamed piece of one tool call, as in OpenAI's {@code delta.tool_calls[]}: the first piece of a call
 * carries its {@code id} and function {@code name}; every piece may carry a fragment of the JSON
 * {@code arguments} (concatenated in order they form the complete arguments text).
 */
public record ToolCallDelta(int index, String id, String name, String arguments) {
}
