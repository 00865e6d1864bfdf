package io.strata.platform.api;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebExchange;

/** Maps every failure of the OpenAI-compatible controllers to the OpenAI error shape (through {@link ApiErrors}). */
@RestControllerAdvice(basePackageClasses = ApiExceptionHandler.class)
public class ApiExceptionHandler {
    private final RequestSizeLimit limit;

    public ApiExceptionHandler(RequestSizeLimit limit) {
        this.limit = limit;
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ErrorResponse> failure(Exception e, ServerWebExchange exchange) {
        return respond(ApiErrors.map(e, exchange.getRequest(), limit));
    }

    static ResponseEntity<ErrorResponse> respond(ApiException e) {
        return ResponseEntity.status(e.status()).contentType(MediaType.APPLICATION_JSON).body(e.body());
    }
}
