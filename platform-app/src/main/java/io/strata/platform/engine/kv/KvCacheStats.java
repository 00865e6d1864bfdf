package io.strata.platform.engine.kv;

/**
 * Prefix-cache and preemption counters, in tokens, as plain fields (the engine thread writes them; metrics
 * read them). Queries and hits count new requests only, as vLLM does; re-admissions after preemption are
 * kept apart so they do not inflate the hit rate. Safe to read from any thread; {@link #reading()} takes
 * them all at once for a snapshot.
 */
public final class KvCacheStats {

    private static final int WINDOW = 1000;

    private volatile long queries;
    private volatile long hits;
    private volatile long recomputed;
    private volatile long preemptedQueries;
    private volatile long preemptedHits;
    private volatile long preemptions;
    private final long[] windowQueries = new long[WINDOW];
    private final long[] windowHits = new long[WINDOW];
    private int windowNext;
    private int windowFill;
    private long windowQuerySum;
    private long windowHitSum;

    void recordAdmission(boolean preempted, long queried, long hit, long recomputedTokens) {
        if (preempted) {
            preemptedQueries += queried;
            preemptedHits += hit;
            return;
        }
        queries += queried;
        hits += hit;
        recomputed += recomputedTokens;
        synchronized (this) {
            windowQuerySum += queried - windowQueries[windowNext];
            windowHitSum += hit - windowHits[windowNext];
            windowQueries[windowNext] = queried;
            windowHits[windowNext] = hit;
            windowNext = (windowNext + 1) % WINDOW;
            windowFill = Math.min(WINDOW, windowFill + 1);
        }
    }

    void recordPreemption() {
        preemptions++;
    }

    /** Prompt tokens of new requests looked up in the prefix cache. */
    public long queries() {
        return queries;
    }

    /** Tokens of those prompts whose computation the cache saved. */
    public long hits() {
        return hits;
    }

    /** Tokens recomputed only to rebuild window/state pages on a hit whose window was evicted. */
    public long recomputed() {
        return recomputed;
    }

    public long preemptedQueries() {
        return preemptedQueries;
    }

    public long preemptedHits() {
        return preemptedHits;
    }

    public long preemptions() {
        return preemptions;
    }

    /** Hits / queries over the last 1,000 new requests (0 when none). */
    public synchronized double hitRateLastRequests() {
        return windowQuerySum == 0 ? 0 : (double) windowHitSum / windowQuerySum;
    }

    public synchronized int requestsInWindow() {
        return windowFill;
    }

    /** The counters at one moment (the window's two under one lock). */
    public synchronized Reading reading() {
        return new Reading(queries, hits, recomputed, preemptions, hitRateLastRequests(), windowFill);
    }

    /** An immutable copy of the counters; see the accessors of {@link KvCacheStats} for their meaning. */
    public record Reading(long queries, long hits, long recomputed, long preemptions, double hitRateLastRequests,
                          int requestsInWindow) {
        public static final Reading NONE = new Reading(0, 0, 0, 0, 0, 0);
    }
}
