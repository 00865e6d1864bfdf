package io.strata.platform.keys;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.stereotype.Repository;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The {@code api_key} table (schema V1). Blocking JDBC: call it off the event loop. */
@Repository
public class ApiKeyRepository {
    private static final RowMapper<ApiKey> ROW = (rs, n) -> new ApiKey(
            rs.getLong("id"), rs.getString("name"), rs.getString("key_prefix"), rs.getString("key_hash"),
            (Integer) rs.getObject("rate_limit_per_minute"), instant(rs.getTimestamp("created_at")),
            instant(rs.getTimestamp("revoked_at")), instant(rs.getTimestamp("last_used_at")));

    private final JdbcClient jdbc;

    public ApiKeyRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    long insert(String name, String prefix, String hash, Integer rateLimitPerMinute) {
        GeneratedKeyHolder keys = new GeneratedKeyHolder();
        jdbc.sql("INSERT INTO api_key (name, key_prefix, key_hash, rate_limit_per_minute) VALUES (:n, :p, :h, :r)")
                .param("n", name).param("p", prefix).param("h", hash).param("r", rateLimitPerMinute)
                .update(keys, "id");
        return keys.getKey().longValue();
    }

    List<ApiKey> all() {
        return jdbc.sql("SELECT * FROM api_key ORDER BY id").query(ROW).list();
    }

    Optional<ApiKey> byId(long id) {
        return jdbc.sql("SELECT * FROM api_key WHERE id = :id").param("id", id).query(ROW).optional();
    }

    /** Active keys whose display prefix matches: the candidates a presented secret is compared with. */
    List<ApiKey> activeByPrefix(String prefix) {
        return jdbc.sql("SELECT * FROM api_key WHERE key_prefix = :p AND revoked_at IS NULL")
                .param("p", prefix).query(ROW).list();
    }

    boolean revoke(long id) {
        return jdbc.sql("UPDATE api_key SET revoked_at = CURRENT_TIMESTAMP WHERE id = :id AND revoked_at IS NULL")
                .param("id", id).update() == 1;
    }

    void touch(long id, Instant when) {
        jdbc.sql("UPDATE api_key SET last_used_at = :t WHERE id = :id")
                .param("t", Timestamp.from(when)).param("id", id).update();
    }

    private static Instant instant(Timestamp ts) {
        return ts == null ? null : ts.toInstant();
    }
}
