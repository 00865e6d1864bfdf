package io.strata.platform.requestlog;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes every API request to the {@code request_log} table. Inserts happen on a writer thread of
 * their own: JDBC blocks, and the request path (Reactor threads, the engine loop) must not.
 * If the database falls behind by more than the queue holds, entries are dropped and counted rather
 * than slowing serving down.
 */
@Component
public class RequestLogWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RequestLogWriter.class);
    private static final int ERROR_MAX = 2000;

    private final JdbcClient jdbc;
    private volatile boolean logPrompts;
    private final BlockingQueue<RequestLogEntry> queue = new ArrayBlockingQueue<>(10_000);
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final Thread writer;
    private volatile boolean running = true;

    public RequestLogWriter(JdbcClient jdbc, @Value("${strata.log-prompts:false}") boolean logPrompts) {
        this.jdbc = jdbc;
        this.logPrompts = logPrompts;
        this.writer = Thread.ofPlatform().daemon().name("strata-request-log").start(this::drain);
    }

    /** Whether prompt text may be stored ({@code strata.log-prompts}). */
    public boolean logPrompts() {
        return logPrompts;
    }

    /** Switches prompt logging for requests logged from now on (the console's Settings page). */
    public void logPrompts(boolean on) {
        logPrompts = on;
    }

    public void log(RequestLogEntry entry) {
        if (!queue.offer(entry)) {
            if (dropped.incrementAndGet() % 1000 == 1) {
                log.warn("Request log is falling behind; {} entries dropped so far", dropped.get());
            }
        }
    }

    public long written() {
        return written.get();
    }

    public long dropped() {
        return dropped.get();
    }

    /** Waits until everything queued so far is in the database (tests, shutdown). */
    public boolean awaitDrained(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (!queue.isEmpty() || inFlight) {
            if (System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private volatile boolean inFlight;

    private void drain() {
        while (running || !queue.isEmpty()) {
            try {
                RequestLogEntry e = queue.poll(200, TimeUnit.MILLISECONDS);
                if (e == null) {
                    continue;
                }
                inFlight = true;
                try {
                    insert(e);
                    written.incrementAndGet();
                } catch (RuntimeException ex) {
                    log.warn("Could not write request log entry {}: {}", e.id(), ex.getMessage());
                } finally {
                    inFlight = false;
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void insert(RequestLogEntry e) {
        String error = e.error() == null || e.error().length() <= ERROR_MAX ? e.error() : e.error().substring(0, ERROR_MAX);
        jdbc.sql("""
                        INSERT INTO request_log (id, created_at, api_key_id, endpoint, model, prompt_tokens, cached_tokens,
                            completion_tokens, queue_ms, ttft_ms, total_ms, finish_reason, http_status, error, prompt_text)
                        VALUES (:id, :createdAt, :apiKeyId, :endpoint, :model, :promptTokens, :cachedTokens,
                            :completionTokens, :queueMs, :ttftMs, :totalMs, :finishReason, :httpStatus, :error, :promptText)
                        """)
                .param("id", e.id())
                .param("createdAt", Timestamp.from(e.createdAt()))
                .param("apiKeyId", e.apiKeyId())
                .param("endpoint", e.endpoint())
                .param("model", e.model())
                .param("promptTokens", e.promptTokens())
                .param("cachedTokens", e.cachedTokens())
                .param("completionTokens", e.completionTokens())
                .param("queueMs", e.queueMs())
                .param("ttftMs", e.ttftMs())
                .param("totalMs", e.totalMs())
                .param("finishReason", e.finishReason())
                .param("httpStatus", e.httpStatus())
                .param("error", error)
                .param("promptText", logPrompts ? e.promptText() : null)
                .update();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        writer.join(5000);
    }
}
