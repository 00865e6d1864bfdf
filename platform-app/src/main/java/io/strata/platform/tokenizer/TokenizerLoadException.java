package io.strata.platform.tokenizer;

/** A model directory's tokenizer could not be loaded; the message names the file and what is wrong. */
public class TokenizerLoadException extends RuntimeException {

    public TokenizerLoadException(String message) {
        super(message);
    }

    public TokenizerLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
