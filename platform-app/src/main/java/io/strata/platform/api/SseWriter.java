package io.strata.platform.api;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;

/**
 * Writes server-sent events exactly as OpenAI/vLLM do ({@code data: <json>\n\n} ... {@code data: [DONE]\n\n}),
 * flushing each event so tokens reach the client as they are generated.
 */
final class SseWriter {
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final ObjectMapper json;

    SseWriter(ObjectMapper json) {
        this.json = json;
    }

    byte[] event(Object payload) {
        byte[] body = json.writeValueAsBytes(payload);
        byte[] out = new byte[body.length + 8];
        System.arraycopy("data: ".getBytes(StandardCharsets.US_ASCII), 0, out, 0, 6);
        System.arraycopy(body, 0, out, 6, body.length);
        out[out.length - 2] = '\n';
        out[out.length - 1] = '\n';
        return out;
    }

    static byte[] done() {
        return DONE.clone();
    }

    Mono<Void> write(ServerHttpResponse response, Flux<byte[]> events) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(MediaType.TEXT_EVENT_STREAM);
        response.getHeaders().setCacheControl("no-cache");
        Flux<Mono<DataBuffer>> flushed = events.map(b -> Mono.just((DataBuffer) response.bufferFactory().wrap(b)));
        return response.writeAndFlushWith(flushed);
    }

    Mono<Void> writeJson(ServerHttpResponse response, Object body) {
        response.setStatusCode(HttpStatus.OK);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(json.writeValueAsBytes(body))));
    }
}
