package io.strata.platform.console;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Finished requests from the engine's request log, newest first, filtered the way the Requests page asks
 * and read one page at a time (the log grows without bound; a page never loads more than it shows).
 */
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
     * @param limit        rows to return, at most 500
     * @param offset       rows to skip, newest first
     */
    public record Filter(String key, String reason, Integer sinceMinutes, int limit, int offset) {
        public static Filter of(String key, String reason, Integer sinceMinutes, int limit) {
            return of(key, reason, sinceMinutes, limit, 0);
        }

        public static Filter of(String key, String reason, Integer sinceMinutes, int limit, int offset) {
            String k = key == null || key.isBlank() ? null : key.trim();
            String r = reason == null || reason.isBlank() ? null : reason.trim().toLowerCase(Locale.ROOT);
            if (r != null && !REASONS.contains(r) && !r.equals("rejected")) {
                throw new IllegalArgumentException("reason must be one of stop, length, abort, error, rejected; got '" + reason + "'");
            }
            if (sinceMinutes != null && sinceMinutes <= 0) {
                throw new IllegalArgumentException("since must be a positive number of minutes");
            }
            if (offset < 0) {
                throw new IllegalArgumentException("offset must not be negative");
            }
            return new Filter(k, r, sinceMinutes, Math.max(1, Math.min(limit, 500)), offset);
        }
    }

    public record Entry(String id, Instant createdAt, String key, String endpoint, Integer promptTokens,
                        Integer cachedTokens, Integer completionTokens, Long queueMs, Long ttftMs, Long totalMs,
                        String finishReason, int httpStatus, String error) {
        /** Creation time as the page shows it. */
        public String time() {
            return ConsoleTime.time(createdAt);
        }

        public String day() {
            return ConsoleTime.day(createdAt);
        }

        public String clock() {
            return ConsoleTime.clock(createdAt);
        }

        public String queue() {
            return duration(queueMs);
        }

        public String ttft() {
            return duration(ttftMs);
        }

        public String total() {
            return duration(totalMs);
        }

        /** The console's one duration format (as console-charts.js writes it): "850 ms", "12.35 s". */
        static String duration(Long ms) {
            if (ms == null) {
                return "—";
            }
            return ms >= 1000 ? String.format(Locale.ROOT, "%,.2f s", ms / 1000.0) : ms + " ms";
        }
    }

    /**
     * One page of the filtered log and how many rows match in all.
     *
     * @param offset rows before this page (newest first)
     */
    public record Page(List<Entry> entries, long total, int offset, int size) {
        /** 1-based number of the page's first row (0 when empty). */
        public long first() {
            return entries.isEmpty() ? 0 : offset + 1;
        }

        public long last() {
            return offset + entries.size();
        }

        public int number() {
            return offset / size + 1;
        }

        public boolean hasNewer() {
            return offset > 0;
        }

        public boolean hasOlder() {
            return last() < total;
        }
    }

    /** Page {@code number} (1-based) of {@code size} rows. */
    public Page page(String key, String reason, Integer sinceMinutes, int number, int size) {
        Filter f = Filter.of(key, reason, sinceMinutes, size, Math.multiplyExact(Math.max(1, number) - 1, size));
        return new Page(find(f), count(f), f.offset(), f.limit());
    }

    public long count(Filter f) {
        StringBuilder sql = new StringBuilder("SELECT COUNT(*) FROM request_log l LEFT JOIN api_key k ON k.id = l.api_key_id WHERE 1 = 1");
        Map<String, Object> params = where(f, sql);
        JdbcClient.StatementSpec spec = jdbc.sql(sql.toString());
        for (Map.Entry<String, Object> p : params.entrySet()) {
            spec = spec.param(p.getKey(), p.getValue());
        }
        return spec.query(Long.class).single();
    }

    public List<Entry> find(Filter f) {
        StringBuilder sql = new StringBuilder("""
                SELECT l.id, l.created_at, l.endpoint, l.prompt_tokens, l.cached_tokens, l.completion_tokens, l.queue_ms,
                       l.ttft_ms, l.total_ms, l.finish_reason, l.http_status, l.error, k.name AS key_name, k.key_prefix
                FROM request_log l LEFT JOIN api_key k ON k.id = l.api_key_id WHERE 1 = 1""");
        Map<String, Object> params = where(f, sql);
        sql.append(" ORDER BY l.created_at DESC, l.id LIMIT ").append(f.limit()).append(" OFFSET ").append(f.offset());
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

    private static Map<String, Object> where(Filter f, StringBuilder sql) {
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
        return params;
    }

    /** Names of keys that appear as filter choices. */
    public List<String> keyNames() {
        return jdbc.sql("SELECT name FROM api_key ORDER BY name").query(String.class).list();
    }
}
