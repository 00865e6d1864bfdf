package io.strata.platform.api;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.databind.ObjectMapper;

/**
 * Answers failures on the API routes that no controller saw — an unknown path under {@code /v1}, a wrong
 * method or Content-Type, a body over the size limit — in the OpenAI error shape instead of Spring
 * Boot's {@code {"timestamp",...}} page. Ordered before Boot's error handler; other paths pass on to it.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 100)
public class ApiErrorWebExceptionHandler implements WebExceptionHandler {
    private final ObjectMapper json;
    private final RequestSizeLimit limit;

    public ApiErrorWebExceptionHandler(ObjectMapper json, RequestSizeLimit limit) {
        this.json = json;
        this.limit = limit;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        ServerHttpResponse response = exchange.getResponse();
        if (!ApiRoutes.isApi(exchange.getRequest().getPath().pathWithinApplication().value()) || response.isCommitted()) {
            return Mono.error(ex);
        }
        ApiException e = ApiErrors.map(ex, exchange.getRequest(), limit);
        response.setStatusCode(e.status());
        HttpHeaders headers = response.getHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        byte[] body = json.writeValueAsBytes(e.body());
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }
}
