package io.strata.platform.engine;

/** The engine cannot take requests: no model loaded, backend unusable, or shutting down. */
public class EngineUnavailableException extends RuntimeException {
    public EngineUnavailableException(String message) {
        super(message);
    }
}
