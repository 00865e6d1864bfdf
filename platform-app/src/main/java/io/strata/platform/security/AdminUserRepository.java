package io.strata.platform.security;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

import java.util.Optional;

/** Console accounts (table {@code admin_user}); only password hashes are stored. */
@Repository
public class AdminUserRepository {
    private final JdbcClient jdbc;

    public AdminUserRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public Optional<AdminUser> find(String username) {
        return jdbc.sql("SELECT username, password_hash, enabled FROM admin_user WHERE username = ?")
                .param(username)
                .query((rs, row) -> new AdminUser(rs.getString(1), rs.getString(2), rs.getBoolean(3)))
                .optional();
    }

    public long count() {
        return jdbc.sql("SELECT COUNT(*) FROM admin_user").query(Long.class).single();
    }

    public void create(String username, String passwordHash) {
        jdbc.sql("INSERT INTO admin_user (username, password_hash) VALUES (?, ?)")
                .param(username)
                .param(passwordHash)
                .update();
    }

    public int updatePassword(String username, String passwordHash) {
        return jdbc.sql("UPDATE admin_user SET password_hash = ?, updated_at = CURRENT_TIMESTAMP WHERE username = ?")
                .param(passwordHash)
                .param(username)
                .update();
    }

    public record AdminUser(String username, String passwordHash, boolean enabled) {
    }
}
