package io.strata.platform.console;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * Folds the once-a-second samples into one row per minute in {@code console_minute_stats}, so the
 * dashboard's charts start from the recent past after a restart. Counter-based figures (rates,
 * preemptions, latency percentiles) come from the difference of the meter readings at the minute's
 * first and last sample; page counts are averages of the samples.
 */
@Component
public class MinuteHistory {
    private static final Logger log = LoggerFactory.getLogger(MinuteHistory.class);
    private static final String[] BUCKETS = {"large", "middle", "small"};
    private static final Duration KEEP = Duration.ofDays(7);

    private final JdbcClient jdbc;
    private Minute current;

    public MinuteHistory(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * One stored minute, as the dashboard charts it.
     *
     * @param minute epoch milliseconds of the minute's start
     */
    public record Row(long minute, int samples, double requestsPerSecond, double promptTokensPerSecond,
                      double generationTokensPerSecond, double runningAvg, double waitingAvg, long preemptions,
                      long aborted, long prefixQueries, long prefixHits, Double hitRateWindow, Double ttftP50,
                      Double ttftP99, Double itlP50, Double itlP99, double largeUsed, double largeCached,
                      double middleUsed, double middleCached, double smallUsed, double smallCached) {
    }

    /** Minutes from {@code since} on, oldest first. */
    public List<Row> since(Instant since) {
        return jdbc.sql("""
                        SELECT * FROM console_minute_stats WHERE minute_start >= :since ORDER BY minute_start""")
                .param("since", Timestamp.from(since))
                .query((rs, i) -> new Row(rs.getTimestamp("minute_start").getTime(), rs.getInt("samples"),
                        rs.getDouble("requests_per_s"), rs.getDouble("prompt_tokens_per_s"), rs.getDouble("gen_tokens_per_s"),
                        rs.getDouble("running_avg"), rs.getDouble("waiting_avg"), rs.getLong("preemptions"),
                        rs.getLong("aborted"), rs.getLong("prefix_queries"), rs.getLong("prefix_hits"),
                        nullable(rs.getDouble("hit_rate_window"), rs.wasNull()),
                        nullable(rs.getDouble("ttft_p50_ms"), rs.wasNull()), nullable(rs.getDouble("ttft_p99_ms"), rs.wasNull()),
                        nullable(rs.getDouble("itl_p50_ms"), rs.wasNull()), nullable(rs.getDouble("itl_p99_ms"), rs.wasNull()),
                        rs.getDouble("large_used_avg"), rs.getDouble("large_cached_avg"), rs.getDouble("middle_used_avg"),
                        rs.getDouble("middle_cached_avg"), rs.getDouble("small_used_avg"), rs.getDouble("small_cached_avg")))
                .list();
    }

    private static Double nullable(double v, boolean wasNull) {
        return wasNull ? null : v;
    }

    /** Adds a sample; when it starts a new minute, the previous one is written first. */
    synchronized void record(LiveStats s, MeterReadings m) {
        Instant minute = Instant.ofEpochMilli(s.at()).truncatedTo(ChronoUnit.MINUTES);
        if (current != null && !current.start.equals(minute)) {
            write(current);
            // the new minute's counters start where the old one's ended
            Minute next = new Minute(minute, current.last, current.lastPrefix);
            current = next;
        }
        if (current == null) {
            // this process's first minute: the previous run may have flushed part of it before a restart
            current = new Minute(minute, m, new long[] {s.prefix().queries(), s.prefix().hits()});
            current.resumed = true;
        }
        current.add(s, m);
    }

    /** Writes the minute in progress (at shutdown, so a restart loses at most the current second). */
    synchronized void flush() {
        if (current != null && current.samples > 0) {
            write(current);
        }
    }

    private void write(Minute m) {
        if (m.samples == 0) {
            return;
        }
        Row r = m.row();
        try {
            if (m.resumed) {
                r = combined(stored(m.start), r);
            }
            jdbc.sql("""
                            MERGE INTO console_minute_stats (minute_start, samples, requests_per_s, prompt_tokens_per_s,
                                gen_tokens_per_s, running_avg, waiting_avg, preemptions, aborted, prefix_queries, prefix_hits,
                                hit_rate_window, ttft_p50_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms, large_used_avg,
                                large_cached_avg, middle_used_avg, middle_cached_avg, small_used_avg, small_cached_avg)
                            KEY (minute_start)
                            VALUES (:minute, :samples, :rps, :pps, :gps, :running, :waiting, :preemptions, :aborted,
                                :queries, :hits, :hitRate, :ttft50, :ttft99, :itl50, :itl99, :lu, :lc, :mu, :mc, :su, :sc)
                            """)
                    .param("minute", Timestamp.from(Instant.ofEpochMilli(r.minute())))
                    .param("samples", r.samples())
                    .param("rps", r.requestsPerSecond())
                    .param("pps", r.promptTokensPerSecond())
                    .param("gps", r.generationTokensPerSecond())
                    .param("running", r.runningAvg())
                    .param("waiting", r.waitingAvg())
                    .param("preemptions", r.preemptions())
                    .param("aborted", r.aborted())
                    .param("queries", r.prefixQueries())
                    .param("hits", r.prefixHits())
                    .param("hitRate", r.hitRateWindow())
                    .param("ttft50", r.ttftP50())
                    .param("ttft99", r.ttftP99())
                    .param("itl50", r.itlP50())
                    .param("itl99", r.itlP99())
                    .param("lu", r.largeUsed())
                    .param("lc", r.largeCached())
                    .param("mu", r.middleUsed())
                    .param("mc", r.middleCached())
                    .param("su", r.smallUsed())
                    .param("sc", r.smallCached())
                    .update();
            prune(KEEP);
        } catch (RuntimeException e) {
            log.warn("Could not write console minute {}: {}", m.start, e.getMessage());
        }
    }

    private Row stored(Instant minute) {
        return since(minute).stream().filter(row -> row.minute() == minute.toEpochMilli()).findFirst().orElse(null);
    }

    /**
     * A minute the previous run flushed at shutdown and this run continued after a restart: counters add up,
     * averages and rates are weighted by samples, and the latest known window rate and percentiles are kept.
     * Writing this run's part alone would wipe the minutes' figures from before the restart.
     */
    static Row combined(Row before, Row after) {
        if (before == null) {
            return after;
        }
        int n = before.samples() + after.samples();
        double wb = (double) before.samples() / n;
        double wa = (double) after.samples() / n;
        return new Row(after.minute(), n,
                before.requestsPerSecond() * wb + after.requestsPerSecond() * wa,
                before.promptTokensPerSecond() * wb + after.promptTokensPerSecond() * wa,
                before.generationTokensPerSecond() * wb + after.generationTokensPerSecond() * wa,
                before.runningAvg() * wb + after.runningAvg() * wa, before.waitingAvg() * wb + after.waitingAvg() * wa,
                before.preemptions() + after.preemptions(), before.aborted() + after.aborted(),
                before.prefixQueries() + after.prefixQueries(), before.prefixHits() + after.prefixHits(),
                latest(before.hitRateWindow(), after.hitRateWindow()),
                latest(before.ttftP50(), after.ttftP50()), latest(before.ttftP99(), after.ttftP99()),
                latest(before.itlP50(), after.itlP50()), latest(before.itlP99(), after.itlP99()),
                before.largeUsed() * wb + after.largeUsed() * wa, before.largeCached() * wb + after.largeCached() * wa,
                before.middleUsed() * wb + after.middleUsed() * wa, before.middleCached() * wb + after.middleCached() * wa,
                before.smallUsed() * wb + after.smallUsed() * wa, before.smallCached() * wb + after.smallCached() * wa);
    }

    private static Double latest(Double before, Double after) {
        return after != null ? after : before;
    }

    /** Deletes minutes older than {@code keep} (an indexed delete, cheap enough once a minute). */
    int prune(Duration keep) {
        return jdbc.sql("DELETE FROM console_minute_stats WHERE minute_start < :before")
                .param("before", Timestamp.from(Instant.now().minus(keep))).update();
    }

    private static final class Minute {
        final Instant start;
        final MeterReadings first;
        final long[] firstPrefix;
        MeterReadings last;
        long[] lastPrefix;
        /** The first minute of this process, which a previous run may already have stored part of. */
        boolean resumed;
        int samples;
        double running;
        double waiting;
        Double hitRate;
        final double[] used = new double[3];
        final double[] cached = new double[3];

        Minute(Instant start, MeterReadings first, long[] firstPrefix) {
            this.start = start;
            this.first = first;
            this.firstPrefix = firstPrefix;
            this.last = first;
            this.lastPrefix = firstPrefix;
        }

        void add(LiveStats s, MeterReadings m) {
            samples++;
            last = m;
            lastPrefix = new long[] {s.prefix().queries(), s.prefix().hits()};
            running += s.load().running();
            waiting += s.load().waiting();
            hitRate = s.prefix().hitRateWindow();
            for (LiveStats.Bucket b : s.buckets()) {
                for (int i = 0; i < BUCKETS.length; i++) {
                    if (BUCKETS[i].equals(b.name()) || (b.name().equals("all") && i == 0)) {
                        used[i] += b.used();
                        cached[i] += b.cached();
                    }
                }
            }
        }

        Row row() {
            double secs = Math.max(1, last.seconds(first));
            return new Row(start.toEpochMilli(), samples, (last.finished() - first.finished()) / secs,
                    (last.promptTokens() - first.promptTokens()) / secs,
                    (last.generationTokens() - first.generationTokens()) / secs, running / samples, waiting / samples,
                    last.preemptions() - first.preemptions(), last.aborted() - first.aborted(),
                    lastPrefix[0] - firstPrefix[0], lastPrefix[1] - firstPrefix[1], hitRate,
                    last.ttftPercentile(first, 0.5), last.ttftPercentile(first, 0.99),
                    last.itlPercentile(first, 0.5), last.itlPercentile(first, 0.99),
                    used[0] / samples, cached[0] / samples, used[1] / samples, cached[1] / samples,
                    used[2] / samples, cached[2] / samples);
        }
    }
}
