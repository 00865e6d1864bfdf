package io.strata.platform.engine;

/** The configured checkpoint cannot be served; the message names the path and what is wrong. */
public class ModelLoadException extends RuntimeException {
    public ModelLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
