package io.strata.platform.api;

import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Turns the choices' events of one request into its response, streamed as SSE chunks or collected into one
 * JSON body. {@link #respond} is the part both completion endpoints share: which of the two to write, and
 * recording in the request log whether the request succeeded, failed mid-way or was abandoned by the client.
 *
 * @param <R> the collected (non-streaming) response body
 */
interface ChoiceAssembler<R> {

    Flux<byte[]> stream(Flux<ChoiceEvent> events, boolean includeUsage, SseWriter sse);

    Mono<R> collect(Flux<ChoiceEvent> events);

    /** The error that ended generation early, or null. */
    ApiException failure();

    default Mono<Void> respond(Flux<ChoiceEvent> events, boolean stream, boolean includeUsage, SseWriter sse,
                               RequestTrace trace, ServerHttpResponse response) {
        if (stream) {
            Flux<byte[]> out = stream(events, includeUsage, sse)
                    .doOnComplete(() -> {
                        ApiException failure = failure();
                        if (failure == null) {
                            trace.success();
                        } else {
                            trace.failure(500, failure.getMessage());
                        }
                    })
                    .doOnCancel(trace::aborted);
            return sse.write(response, out);
        }
        return collect(events)
                .doOnCancel(trace::aborted)
                .flatMap(body -> {
                    ApiException failure = failure();
                    if (failure != null) {
                        trace.failure(failure.status().value(), failure.getMessage());
                        return Mono.error(failure);
                    }
                    trace.success();
                    return sse.writeJson(response, body);
                });
    }
}
