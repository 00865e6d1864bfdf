package io.strata.platform.api;

/** OpenAI's error body; {@code code} is the HTTP status as an integer, as vLLM sends it. */
public record ErrorResponse(Detail error) {

    public record Detail(String message, String type, String param, int code) {
    }

    public static ErrorResponse of(int status, String type, String param, String message) {
        return new ErrorResponse(new Detail(message, type, param, status));
    }
}
