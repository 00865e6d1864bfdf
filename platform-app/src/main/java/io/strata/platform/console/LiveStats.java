package io.strata.platform.console;

import java.util.List;

/**
 * What the dashboard shows, sampled about once a second and pushed to browsers as one server-sent
 * event. Rates are per second over the last sample interval; latency percentiles are over the
 * requests of the last {@link StatsSampler#LATENCY_WINDOW_SECONDS} seconds (null when there were none).
 *
 * @param at epoch milliseconds of the sample
 */
public record LiveStats(long at, Health health, List<Bucket> buckets, Prefix prefix, Load load, Latency latency) {

    /**
     * @param up      whether the engine serves
     * @param detail  why not, when it does not
     * @param backend backends with their devices, e.g. {@code cpu: x86_64 (2 cores)}
     */
    public record Health(boolean up, String detail, String backend, String model, int maxModelLen,
                         long uptimeSeconds, String version) {
    }

    /**
     * One page-size bucket pool. {@code free} excludes cached pages, so used + cached + free = total.
     *
     * @param pageBytes bytes of one page row (all layers of a kind group)
     */
    public record Bucket(String name, long pageBytes, long total, long used, long cached, long free,
                         long totalBytes, List<KindPages> kinds) {
    }

    /** A cache kind held in a bucket, with the pages live requests reference. */
    public record KindPages(String kind, int layers, int groups, long pagesInUse) {
    }

    /**
     * Prefix cache, in tokens.
     *
     * @param hitRateWindow    hits / queries over the last 1,000 new requests (null when not measured)
     * @param windowRequests   requests in that window
     * @param hitRateTotal     hits / queries since this process started (null before the first query, so
     *                         a fresh start is "no data", not a 0 % hit rate)
     * @param cachedShare      prompt tokens served from the cache / prompt tokens, since start (null before
     *                         the first request finished)
     */
    public record Prefix(Double hitRateWindow, int windowRequests, Double hitRateTotal, long queries, long hits,
                         Double cachedShare) {
    }

    /** Scheduler state and throughput. Totals are since start. */
    public record Load(int running, int waiting, int preemptedWaiting, long preemptionsTotal, long abortedTotal,
                       long finishedTotal, double requestsPerSecond, double promptTokensPerSecond,
                       double generationTokensPerSecond) {
    }

    /** Milliseconds. */
    public record Latency(Double ttftP50, Double ttftP99, Double itlP50, Double itlP99) {
    }
}
