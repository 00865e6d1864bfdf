package io.strata.platform.engine.sampling;

/**
 * A sampling parameter that cannot be honoured. {@link #param()} is the request field's name as the
 * client wrote it, so the API can answer 400 naming it.
 */
public class SamplingParameterException extends IllegalArgumentException {
    private final String param;

    public SamplingParameterException(String param, String message) {
        super(message);
        this.param = param;
    }

    public String param() {
        return param;
    }
}
