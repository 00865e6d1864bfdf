package io.strata.platform.api;

import io.strata.platform.engine.EngineUnavailableException;
import io.strata.platform.engine.QueueFullException;
import io.strata.platform.engine.sampling.SamplingParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

/** Maps every failure of the OpenAI-compatible controllers to the OpenAI error shape. */
@RestControllerAdvice(basePackageClasses = ApiExceptionHandler.class)
public class ApiExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

    @ExceptionHandler(ApiException.class)
    ResponseEntity<ErrorResponse> api(ApiException e) {
        return respond(e);
    }

    @ExceptionHandler(SamplingParameterException.class)
    ResponseEntity<ErrorResponse> sampling(SamplingParameterException e) {
        return respond(ApiException.invalid(e.param(), e.getMessage()));
    }

    @ExceptionHandler(QueueFullException.class)
    ResponseEntity<ErrorResponse> queueFull(QueueFullException e) {
        return respond(ApiException.unavailable(e.getMessage()));
    }

    @ExceptionHandler(EngineUnavailableException.class)
    ResponseEntity<ErrorResponse> down(EngineUnavailableException e) {
        return respond(ApiException.unavailable(e.getMessage()));
    }

    @ExceptionHandler(ServerWebInputException.class)
    ResponseEntity<ErrorResponse> input(ServerWebInputException e) {
        return respond(ApiException.invalid(null, "Invalid request body: " + e.getReason()));
    }

    @ExceptionHandler(UnsupportedMediaTypeStatusException.class)
    ResponseEntity<ErrorResponse> mediaType(UnsupportedMediaTypeStatusException e) {
        return respond(ApiException.invalid(null, "Content-Type must be application/json"));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ErrorResponse> unexpected(Exception e) {
        log.error("Unexpected API failure", e);
        return respond(new ApiException(HttpStatus.INTERNAL_SERVER_ERROR, "InternalServerError", null,
                "Internal server error: " + e.getClass().getSimpleName()));
    }

    static ResponseEntity<ErrorResponse> respond(ApiException e) {
        return ResponseEntity.status(e.status()).contentType(MediaType.APPLICATION_JSON).body(e.body());
    }
}
