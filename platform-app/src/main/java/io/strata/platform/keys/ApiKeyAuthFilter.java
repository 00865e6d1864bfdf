package io.strata.platform.keys;

import io.strata.platform.api.ApiRoutes;
import io.strata.platform.api.ErrorResponse;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.ObjectMapper;

import java.util.Optional;

/**
 * Checks {@code Authorization: Bearer <key>} on the model API and applies the key's rate limit.
 * Missing or unknown keys get 401, keys over their limit 429, both in OpenAI's error shape. The key's
 * id is left on the exchange for the request log. Runs inside {@link ApiSecurityConfiguration}'s chain.
 */
public class ApiKeyAuthFilter implements WebFilter {

    private final ApiKeyService keys;
    private final RateLimiter limiter;
    private final ObjectMapper json;

    public ApiKeyAuthFilter(ApiKeyService keys, RateLimiter limiter, ObjectMapper json) {
        this.keys = keys;
        this.limiter = limiter;
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!ApiRoutes.isApi(exchange.getRequest().getPath().pathWithinApplication().value())
                || "OPTIONS".equals(exchange.getRequest().getMethod().name())) {
            return chain.filter(exchange);
        }
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return reject(exchange, HttpStatus.UNAUTHORIZED, "AuthenticationError",
                    "Missing API key: send it as 'Authorization: Bearer <key>'.", 0);
        }
        String presented = header.substring(7).trim();
        return Mono.fromCallable(() -> keys.verify(presented))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap((Optional<ApiKey> found) -> {
                    if (found.isEmpty()) {
                        return reject(exchange, HttpStatus.UNAUTHORIZED, "AuthenticationError",
                                "Invalid or revoked API key.", 0);
                    }
                    ApiKey key = found.get();
                    if (key.rateLimitPerMinute() != null) {
                        long wait = limiter.tryAcquire(key.id(), key.rateLimitPerMinute());
                        if (wait > 0) {
                            return reject(exchange, HttpStatus.TOO_MANY_REQUESTS, "RateLimitError",
                                    "Rate limit exceeded for this API key (" + key.rateLimitPerMinute()
                                            + " requests per minute). Retry after " + wait + " s.", wait);
                        }
                    }
                    exchange.getAttributes().put(ApiRoutes.KEY_ID_ATTRIBUTE, key.id());
                    return chain.filter(exchange);
                });
    }

    private Mono<Void> reject(ServerWebExchange exchange, HttpStatus status, String type, String message, long retryAfter) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        if (status == HttpStatus.UNAUTHORIZED) {
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
        }
        if (retryAfter > 0) {
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
        }
        byte[] body = json.writeValueAsBytes(ErrorResponse.of(status.value(), type, null, message));
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }
}
