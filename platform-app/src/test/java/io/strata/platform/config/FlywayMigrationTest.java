package io.strata.platform.config;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The migrations in the db module build the whole schema on an empty H2 file database. */
class FlywayMigrationTest {

    @TempDir
    Path dir;

    @Test
    void migratesAFreshDatabase() throws Exception {
        SimpleDriverDataSource dataSource = new SimpleDriverDataSource(
                new org.h2.Driver(), "jdbc:h2:file:" + dir.resolve("fresh") + ";DB_CLOSE_ON_EXIT=FALSE", "strata", "");
        Flyway flyway = Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load();

        MigrateResult result = flyway.migrate();

        assertThat(result.success).isTrue();
        assertThat(result.migrationsExecuted).isGreaterThanOrEqualTo(1);
        assertThat(result.migrations.getFirst().version).isEqualTo("1");
        assertThat(flyway.info().pending()).isEmpty();

        JdbcClient jdbc = JdbcClient.create(dataSource);
        List<String> tables = jdbc.sql("SELECT LOWER(table_name) FROM information_schema.tables WHERE table_schema = 'PUBLIC'")
                .query(String.class).list();
        assertThat(tables).contains("plugin_state", "setting", "admin_user", "api_key", "request_log");

        List<String> logColumns = jdbc.sql("SELECT LOWER(column_name) FROM information_schema.columns WHERE table_name = 'REQUEST_LOG'")
                .query(String.class).list();
        assertThat(logColumns).contains("id", "created_at", "api_key_id", "model", "prompt_tokens", "cached_tokens",
                "completion_tokens", "queue_ms", "ttft_ms", "total_ms", "finish_reason", "error");

        // the schema enforces what the code relies on
        jdbc.sql("INSERT INTO api_key (name, key_prefix, key_hash) VALUES ('a', 'sk-abc', 'h1')").update();
        assertThatThrownBy(() -> jdbc.sql("INSERT INTO api_key (name, key_prefix, key_hash) VALUES ('b', 'sk-abd', 'h1')").update())
                .isInstanceOf(DataIntegrityViolationException.class);
        assertThatThrownBy(() -> jdbc.sql("INSERT INTO api_key (name, key_prefix, key_hash, rate_limit_per_minute) VALUES ('c', 'sk-x', 'h2', 0)").update())
                .isInstanceOf(DataIntegrityViolationException.class);
        assertThatThrownBy(() -> jdbc.sql("INSERT INTO request_log (id, api_key_id) VALUES ('r1', 999)").update())
                .isInstanceOf(DataIntegrityViolationException.class);

        // a second run on the migrated database changes nothing
        assertThat(flyway.migrate().migrationsExecuted).isZero();
    }
}
