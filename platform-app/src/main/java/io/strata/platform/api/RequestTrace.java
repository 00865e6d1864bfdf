package io.strata.platform.api;

import io.strata.platform.engine.GenerationEvent;
import io.strata.platform.engine.sampling.SamplingParameterException;
import io.strata.platform.requestlog.RequestLogEntry;
import io.strata.platform.requestlog.RequestLogWriter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/** Collects what the request log needs while one API request runs, and writes it once at the end. */
final class RequestTrace {
    private final RequestLogWriter writer;
    private final String id;
    private final String endpoint;
    private final Long apiKeyId;
    private final Instant createdAt = Instant.now();
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean written = new AtomicBoolean();
    private volatile String model;
    private volatile String promptText;
    private volatile Integer promptTokens;
    private volatile Integer cachedTokens;
    private volatile int completionTokens;
    private volatile Long queueMs;
    private volatile Long ttftMs;
    private volatile String finishReason;

    RequestTrace(RequestLogWriter writer, ServerWebExchange exchange, String idPrefix, String endpoint) {
        this.writer = writer;
        this.id = idPrefix + java.util.UUID.randomUUID().toString().replace("-", "");
        this.endpoint = endpoint;
        Object key = exchange.getAttribute(ApiRoutes.KEY_ID_ATTRIBUTE);
        this.apiKeyId = key instanceof Long l ? l : null;
    }

    /**
     * Runs the synchronous part of a request (parsing, validation, submission); a failure there is logged
     * as the request's outcome (400 for bad input, 503 when the engine cannot take it) and rethrown.
     */
    Mono<Void> guard(Supplier<Mono<Void>> run) {
        try {
            return run.get();
        } catch (ApiException e) {
            failure(e.status().value(), e.getMessage());
            throw e;
        } catch (RuntimeException e) {
            failure(e instanceof SamplingParameterException ? 400 : 503, e.getMessage());
            throw e;
        }
    }

    String id() {
        return id;
    }

    void model(String model) {
        this.model = model;
    }

    void prompt(String text, int tokens) {
        this.promptText = writer.logPrompts() ? text : null;
        this.promptTokens = tokens;
    }

    /** Records timing and token counts from one choice's events. */
    void observe(GenerationEvent event) {
        switch (event) {
            case GenerationEvent.Started s -> {
                if (queueMs == null) {
                    queueMs = s.queueNanos() / 1_000_000;
                    cachedTokens = s.cachedTokens();
                }
            }
            case GenerationEvent.Delta d -> {
                if (ttftMs == null && d.tokens().length > 0) {
                    ttftMs = (System.nanoTime() - startNanos) / 1_000_000;
                }
            }
            case GenerationEvent.Finished f -> {
                synchronized (this) {
                    completionTokens += f.completionTokens();
                }
                if (finishReason == null || f.reason() != io.strata.platform.engine.FinishReason.STOP) {
                    finishReason = f.reason().wire();
                }
            }
        }
    }

    void success() {
        write(200, null, finishReason);
    }

    void failure(int status, String message) {
        write(status, message, finishReason == null ? "error" : finishReason);
    }

    void aborted() {
        write(499, "client disconnected", "abort");
    }

    private void write(int status, String error, String reason) {
        if (!written.compareAndSet(false, true)) {
            return;
        }
        writer.log(new RequestLogEntry(id, createdAt, apiKeyId, endpoint, model, promptTokens, cachedTokens,
                completionTokens, queueMs, ttftMs, (System.nanoTime() - startNanos) / 1_000_000, reason, status,
                error, promptText));
    }
}
