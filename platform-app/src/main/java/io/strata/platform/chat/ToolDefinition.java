package io.strata.platform.chat;

/** An entry of the request's {@code tools} array: {@code {"type": "function", "function": {…}}}. */
public record ToolDefinition(String type, FunctionDefinition function) {

    public static ToolDefinition function(FunctionDefinition function) {
        return new ToolDefinition("function", function);
    }
}
