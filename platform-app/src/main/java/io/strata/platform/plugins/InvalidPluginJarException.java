package io.strata.platform.plugins;

/** A file that is not a usable plugin jar; the message says what is wrong in operator terms. */
public class InvalidPluginJarException extends Exception {
    public InvalidPluginJarException(String message) {
        super(message);
    }

    public InvalidPluginJarException(String message, Throwable cause) {
        super(message, cause);
    }
}
