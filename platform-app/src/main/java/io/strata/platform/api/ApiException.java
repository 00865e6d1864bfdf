package io.strata.platform.api;

import org.springframework.http.HttpStatus;

/** An error the API reports in OpenAI's shape {@code {"error":{"message","type","param","code"}}}. */
public class ApiException extends RuntimeException {
    private final HttpStatus status;
    private final String type;
    private final String param;

    public ApiException(HttpStatus status, String type, String param, String message) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
    }

    public static ApiException invalid(String param, String message) {
        return new ApiException(HttpStatus.BAD_REQUEST, "BadRequestError", param, message);
    }

    public static ApiException notFound(String param, String message) {
        return new ApiException(HttpStatus.NOT_FOUND, "NotFoundError", param, message);
    }

    public static ApiException tooLarge(String message) {
        return new ApiException(HttpStatus.PAYLOAD_TOO_LARGE, "RequestTooLargeError", null, message);
    }

    public static ApiException unavailable(String message) {
        return new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "ServiceUnavailableError", null, message);
    }

    public HttpStatus status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public ErrorResponse body() {
        return ErrorResponse.of(status.value(), type, param, getMessage());
    }
}
