package io.strata.platform.chat;

/** A chat request the DeepSeek-V4 format cannot express; the message names the field and the rule. */
public class ChatFormatException extends IllegalArgumentException {

    public ChatFormatException(String message) {
        super(message);
    }
}
