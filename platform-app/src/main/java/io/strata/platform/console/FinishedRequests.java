package io.strata.platform.console;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Recent finished requests from the engine's request log, filtered the way the Requests page asks. */
@Component
public class FinishedRequests {
    static final Set<String> REASONS = Set.of("stop", "length", "abort", "error");

    private final JdbcClient jdbc;

    public FinishedRequests(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * @param key          key name or prefix to match exactly, {@code none} for requests without a key; null = any
     * @param reason       finish reason ({@code stop|length|abort|error}), {@code rejected} for requests refused
     *                     before the engine (no finish reason); null = any
     * @param sinceMinutes only requests created in the last minutes; null = any time
     */
    public record Filter(String key, String reason, Integer sinceMinutes, int limit) {
        public static Filter of(String key, String reason, Integer sinceMinutes, int limit) {
            String k = key == null || key.isBlank() ? null : key.trim();
            String r = reason == null || reason.isBlank() ? null : reason.trim().toLowerCase(Locale.ROOT);
            if (r != null && !REASONS.contains(r) && !r.equals("rejected")) {
                throw new IllegalArgumentException("reason must be one of stop, length, abort, error, rejected; got '" + reason + "'");
            }
            if (sinceMinutes != null && sinceMinutes <= 0) {
                throw new IllegalArgumentException("since must be a positive number of minutes");
            }
            return new Filter(k, r, sinceMinutes, Math.max(1, Math.min(limit, 500)));
        }
    }

    public record Entry(String id, Instant createdAt, String key, String endpoint, Integer promptTokens,
                        Integer cachedTokens, Integer completionTokens, Long queueMs, Long ttftMs, Long totalMs,
                        String finishReason, int httpStatus, String error) {
        private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
                .withZone(ZoneOffset.UTC);

        /** Creation time as the page shows it. */
        public String time() {
            return TIME.format(createdAt);
        }
    }

    public List<Entry> find(Filter f) {
        StringBuilder sql = new StringBuilder("""
                SELECT l.id, l.created_at, l.endpoint, l.prompt_tokens, l.cached_tokens, l.completion_tokens, l.queue_ms,
                       l.ttft_ms, l.total_ms, l.finish_reason, l.http_status, l.error, k.name AS key_name, k.key_prefix
                FROM request_log l LEFT JOIN api_key k ON k.id = l.api_key_id WHERE 1 = 1""");
        Map<String, Object> params = new LinkedHashMap<>();
        if (f.key() != null) {
            if (f.key().equalsIgnoreCase("none")) {
                sql.append(" AND l.api_key_id IS NULL");
            } else {
                sql.append(" AND (k.name = :key OR k.key_prefix = :key)");
                params.put("key", f.key());
            }
        }
        if (f.reason() != null) {
            if (f.reason().equals("rejected")) {
                sql.append(" AND l.finish_reason IS NULL");
            } else {
                sql.append(" AND l.finish_reason = :reason");
                params.put("reason", f.reason());
            }
        }
        if (f.sinceMinutes() != null) {
            sql.append(" AND l.created_at >= :since");
            params.put("since", Timestamp.from(Instant.now().minus(Duration.ofMinutes(f.sinceMinutes()))));
        }
        sql.append(" ORDER BY l.created_at DESC LIMIT ").append(f.limit());
        JdbcClient.StatementSpec spec = jdbc.sql(sql.toString());
        for (Map.Entry<String, Object> p : params.entrySet()) {
            spec = spec.param(p.getKey(), p.getValue());
        }
        List<Entry> out = new ArrayList<>();
        spec.query(rs -> {
            String name = rs.getString("key_name");
            String prefix = rs.getString("key_prefix");
            out.add(new Entry(rs.getString("id"), rs.getTimestamp("created_at").toInstant(),
                    name == null ? null : name + " (" + prefix + "…)", rs.getString("endpoint"),
                    (Integer) rs.getObject("prompt_tokens"), (Integer) rs.getObject("cached_tokens"),
                    (Integer) rs.getObject("completion_tokens"), (Long) rs.getObject("queue_ms"),
                    (Long) rs.getObject("ttft_ms"), (Long) rs.getObject("total_ms"), rs.getString("finish_reason"),
                    rs.getInt("http_status"), rs.getString("error")));
        });
        return out;
    }

    /** Names of keys that appear as filter choices. */
    public List<String> keyNames() {
        return jdbc.sql("SELECT name FROM api_key ORDER BY name").query(String.class).list();
    }
}
