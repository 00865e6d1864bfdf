package io.strata.platform.chat;

/** The function part of an OpenAI tool call; {@code arguments} is a JSON object as text. */
public record FunctionCall(String name, String arguments) {
}
