package io.strata.platform.api;

import io.strata.platform.engine.EngineUnavailableException;
import io.strata.platform.engine.QueueFullException;
import io.strata.platform.engine.sampling.SamplingParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

import java.util.stream.Collectors;

/**
 * The one place that turns a failure on the API routes into an {@link ApiException}, whether a
 * controller threw it ({@link ApiExceptionHandler}) or it happened before any controller was found
 * ({@link ApiErrorWebExceptionHandler}: unknown route, wrong method or media type, a body over the limit).
 * Client mistakes are logged in one line at DEBUG; only failures of the server get a stack trace.
 */
final class ApiErrors {
    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);
    static final String ROUTES = "POST /v1/chat/completions, POST /v1/completions, GET /v1/models, "
            + "POST /tokenize and POST /detokenize";

    private ApiErrors() {
    }

    static ApiException map(Throwable e, ServerHttpRequest request, RequestSizeLimit limit) {
        ApiException mapped = classify(e, request, limit);
        if (mapped.status().is5xxServerError() && !(e instanceof ApiException) && !(e instanceof QueueFullException)
                && !(e instanceof EngineUnavailableException)) {
            log.error("Unexpected API failure on {} {}", request.getMethod(), request.getPath(), e);
        } else {
            log.debug("{} {} -> {}: {}", request.getMethod(), request.getPath(), mapped.status().value(), mapped.getMessage());
        }
        return mapped;
    }

    private static ApiException classify(Throwable e, ServerHttpRequest request, RequestSizeLimit limit) {
        return switch (e) {
            case ApiException api -> api;
            case SamplingParameterException s -> ApiException.invalid(s.param(), s.getMessage());
            case QueueFullException q -> ApiException.unavailable(q.getMessage());
            case EngineUnavailableException d -> ApiException.unavailable(d.getMessage());
            case DataBufferLimitException tooLarge -> ApiException.tooLarge(limit.message());
            case UnsupportedMediaTypeStatusException media -> new ApiException(HttpStatus.UNSUPPORTED_MEDIA_TYPE,
                    "UnsupportedMediaTypeError", null, "Content-Type " + (media.getContentType() == null ? "(none)"
                    : "'" + media.getContentType() + "'") + " is not supported; send the body as application/json.");
            case MethodNotAllowedException method -> new ApiException(HttpStatus.METHOD_NOT_ALLOWED, "MethodNotAllowedError",
                    null, method.getHttpMethod() + " is not allowed on " + request.getPath() + "; use "
                    + method.getSupportedMethods().stream().map(HttpMethod::name).sorted().collect(Collectors.joining(" or ")) + ".");
            case ServerWebInputException input when causedBy(input, DataBufferLimitException.class) ->
                    ApiException.tooLarge(limit.message());
            case ServerWebInputException input -> ApiException.invalid(null, "Invalid request body: " + input.getReason());
            case ResponseStatusException status when status.getStatusCode().value() == 413 -> ApiException.tooLarge(limit.message());
            case ResponseStatusException status when status.getStatusCode().value() == 404 -> ApiException.notFound(null,
                    "There is no " + request.getMethod() + " " + request.getPath() + " here. The API serves " + ROUTES + ".");
            case ResponseStatusException status -> {
                HttpStatus code = HttpStatus.valueOf(status.getStatusCode().value());
                yield new ApiException(code, typeOf(code), null, status.getReason() == null ? code.getReasonPhrase() : status.getReason());
            }
            default -> causedBy(e, DataBufferLimitException.class) ? ApiException.tooLarge(limit.message())
                    : new ApiException(HttpStatus.INTERNAL_SERVER_ERROR, "InternalServerError", null,
                    "Internal server error: " + e.getClass().getSimpleName());
        };
    }

    private static String typeOf(HttpStatus status) {
        return status.getReasonPhrase().replaceAll("[^A-Za-z]", "") + "Error";
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
