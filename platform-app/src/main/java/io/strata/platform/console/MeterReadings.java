package io.strata.platform.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The engine's cumulative counters and latency histograms at one instant, read from the Micrometer
 * registry by name (the engine's metric names, see docs/operations.md), so the console needs no hook
 * into the engine's hot path. Rates and percentiles come from the difference of two readings.
 *
 * @param nanos      {@link System#nanoTime()} of the reading
 * @param ttftBounds bucket upper bounds in ms; {@code ttft} holds cumulative counts per bound
 */
record MeterReadings(long nanos, long finished, long aborted, long promptTokens, long generationTokens,
                     long cachedTokens, long preemptions, double[] ttftBounds, long[] ttft, long ttftCount,
                     double[] itlBounds, long[] itl, long itlCount) {

    static final String FINISHED = "strata.request_success";
    static final String PROMPT = "strata.prompt_tokens";
    static final String GENERATION = "strata.generation_tokens";
    static final String CACHED = "strata.prompt_tokens_cached";
    static final String PREEMPTIONS = "strata.num_preemptions";
    static final String TTFT = "strata.time_to_first_token";
    static final String ITL = "strata.inter_token_latency";

    static MeterReadings read(MeterRegistry registry) {
        long aborted = 0;
        long finished = 0;
        for (Counter c : registry.find(FINISHED).counters()) {
            long n = (long) c.count();
            finished += n;
            if ("abort".equals(c.getId().getTag("finished_reason"))) {
                aborted += n;
            }
        }
        HistogramSnapshot ttft = snapshot(registry, TTFT);
        HistogramSnapshot itl = snapshot(registry, ITL);
        return new MeterReadings(System.nanoTime(), finished, aborted, sum(registry, PROMPT), sum(registry, GENERATION),
                sum(registry, CACHED), sum(registry, PREEMPTIONS), bounds(ttft), counts(ttft), ttft == null ? 0 : ttft.count(),
                bounds(itl), counts(itl), itl == null ? 0 : itl.count());
    }

    static MeterReadings empty() {
        return new MeterReadings(System.nanoTime(), 0, 0, 0, 0, 0, 0, new double[0], new long[0], 0, new double[0],
                new long[0], 0);
    }

    private static long sum(MeterRegistry registry, String name) {
        double s = 0;
        for (Counter c : registry.find(name).counters()) {
            s += c.count();
        }
        return (long) s;
    }

    private static HistogramSnapshot snapshot(MeterRegistry registry, String name) {
        Timer t = registry.find(name).timer();
        return t == null ? null : t.takeSnapshot();
    }

    private static double[] bounds(HistogramSnapshot s) {
        if (s == null) {
            return new double[0];
        }
        CountAtBucket[] b = s.histogramCounts();
        double[] out = new double[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i].bucket(TimeUnit.MILLISECONDS);
        }
        return out;
    }

    private static long[] counts(HistogramSnapshot s) {
        if (s == null) {
            return new long[0];
        }
        CountAtBucket[] b = s.histogramCounts();
        long[] out = new long[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = (long) b[i].count();
        }
        return out;
    }

    double seconds(MeterReadings earlier) {
        return Math.max(1e-9, (nanos - earlier.nanos) / 1e9);
    }

    /** TTFT percentile (0..1) in ms over the requests between {@code earlier} and this reading, or null. */
    Double ttftPercentile(MeterReadings earlier, double q) {
        return percentile(ttftBounds, ttft, ttftCount, earlier.ttftBounds, earlier.ttft, earlier.ttftCount, q);
    }

    Double itlPercentile(MeterReadings earlier, double q) {
        return percentile(itlBounds, itl, itlCount, earlier.itlBounds, earlier.itl, earlier.itlCount, q);
    }

    /**
     * A percentile from the difference of two cumulative bucket snapshots, interpolated linearly inside
     * the bucket it falls in (as Prometheus' histogram_quantile does). Observations above the last
     * bound report the last bound.
     */
    static Double percentile(double[] bounds, long[] now, long countNow, double[] thenBounds, long[] then,
                             long countThen, double q) {
        long total = countNow - countThen;
        if (total <= 0 || bounds.length == 0) {
            return null;
        }
        boolean comparable = Arrays.equals(bounds, thenBounds);
        double rank = q * total;
        long prevCum = 0;
        double prevBound = 0;
        for (int i = 0; i < bounds.length; i++) {
            long cum = now[i] - (comparable ? then[i] : 0);
            if (cum >= rank && cum > prevCum) {
                double frac = (rank - prevCum) / (cum - prevCum);
                return prevBound + (bounds[i] - prevBound) * Math.max(0, Math.min(1, frac));
            }
            prevCum = cum;
            prevBound = bounds[i];
        }
        return bounds[bounds.length - 1];
    }
}
