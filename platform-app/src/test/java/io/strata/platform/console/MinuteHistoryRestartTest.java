package io.strata.platform.console;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A restart inside a minute: the stopping run flushes the part of the minute it saw, the next run continues
 * the same minute. The stored minute must hold both parts, not only the second (which made the dashboard's
 * hit-rate line fall to nothing at a restart).
 */
class MinuteHistoryRestartTest {

    @TempDir
    Path dir;

    private static LiveStats sample(long at, long queries, long hits) {
        return new LiveStats(at, new LiveStats.Health(true, "", "cpu", "m", 8192, 1, "dev"), List.of(),
                new LiveStats.Prefix(0.9, 10, queries == 0 ? null : (double) hits / queries, queries, hits, null),
                new LiveStats.Load(0, 0, 0, 0, 0, 0, 0, 0, 0), new LiveStats.Latency(null, null, null, null));
    }

    @Test
    void aMinuteContinuedAfterARestartKeepsWhatTheFirstRunStored() {
        SimpleDriverDataSource db = new SimpleDriverDataSource(new org.h2.Driver(),
                "jdbc:h2:file:" + dir.resolve("db") + ";DB_CLOSE_ON_EXIT=FALSE", "strata", "");
        Flyway.configure().dataSource(db).locations("classpath:db/migration").load().migrate();
        JdbcClient jdbc = JdbcClient.create(db);
        Instant minute = Instant.now().truncatedTo(ChronoUnit.MINUTES).minus(5, ChronoUnit.MINUTES);
        long t = minute.toEpochMilli();

        // first run: 20 seconds of this minute, 1,000 prompt tokens looked up, 800 hits, then shutdown
        MinuteHistory first = new MinuteHistory(jdbc);
        first.record(sample(t + 1_000, 0, 0), MeterReadings.empty());
        first.record(sample(t + 20_000, 1_000, 800), MeterReadings.empty());
        first.flush();

        // second run, same minute: its counters start again from zero; 100 more tokens, 50 hits
        MinuteHistory second = new MinuteHistory(jdbc);
        second.record(sample(t + 40_000, 0, 0), MeterReadings.empty());
        second.record(sample(t + 50_000, 100, 50), MeterReadings.empty());
        second.flush();

        MinuteHistory.Row row = new MinuteHistory(jdbc).since(minute).getFirst();
        assertThat(row.minute()).isEqualTo(t);
        assertThat(row.samples()).isEqualTo(4);
        assertThat(row.prefixQueries()).isEqualTo(1_100);
        assertThat(row.prefixHits()).isEqualTo(850);
    }
}
