package io.strata.platform.plugins;

/** An uploaded jar was refused; the message is shown to the operator as is. */
public class PluginInstallException extends Exception {
    public PluginInstallException(String message) {
        super(message);
    }

    public PluginInstallException(String message, Throwable cause) {
        super(message, cause);
    }
}
