package io.strata.platform.chat;

/** Generated text that breaks the DSML tool-call syntax; the message says where and what was expected. */
public class ChatOutputException extends RuntimeException {

    public ChatOutputException(String message) {
        super(message);
    }
}
