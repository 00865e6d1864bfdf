package io.strata.platform.engine.kv;

import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.Arrays;
import java.util.List;

/**
 * What the pools can ever hold: one sequence's peak page demand and whether it fits the empty pools. A pure
 * function of the layout and the pool sizes, so it is safe from any thread (the API checks a request against
 * it before queueing it). Page counts in use now are in {@link KvUsage}, which the engine thread publishes.
 */
public final class KvCapacity {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final KvLayout layout;
    private final KvPoolSizes sizes;
    private final long[] pages = new long[PageBucket.values().length];
    private final KindLayout[] windowKinds;
    private final int[] windowBuckets;
    private final int[] compressedBuckets;

    public KvCapacity(KvLayout layout, KvPoolSizes sizes) {
        this.layout = layout;
        this.sizes = sizes;
        for (PageBucket b : PageBucket.values()) {
            pages[b.ordinal()] = layout.hasBucket(b) ? sizes.pages(b) : 0;
        }
        List<KindGroup> groups = layout.groups();
        this.windowKinds = groups.stream().filter(g -> !g.kind().compressed()).map(layout::kindOf).toArray(KindLayout[]::new);
        this.windowBuckets = groups.stream().filter(g -> !g.kind().compressed()).mapToInt(g -> g.bucket().ordinal()).toArray();
        this.compressedBuckets = groups.stream().filter(g -> g.kind().compressed()).mapToInt(g -> g.bucket().ordinal()).toArray();
    }

    public KvLayout layout() {
        return layout;
    }

    public KvPoolSizes sizes() {
        return sizes;
    }

    /** Pages of a bucket's pool (0 when the layout has no such bucket). */
    public long pages(PageBucket bucket) {
        return pages[bucket.ordinal()];
    }

    /**
     * Whether a sequence of {@code tokens} positions could ever fit the empty pools, decoded one position per
     * step (see {@link #canEverFit(long, int)} for prefill in chunks).
     */
    public boolean canEverFit(long tokens) {
        return PagePools.fits(KvPoolSizes.demand(layout, tokens), pages);
    }

    /**
     * Whether a sequence of {@code tokens} positions, prefilled (or recomputed after preemption) alone in
     * chunks of {@code chunk} positions and decoded after, could ever fit the empty pools.
     */
    public boolean canEverFit(long tokens, int chunk) {
        return PagePools.fits(peakDemand(tokens, chunk), pages);
    }

    /**
     * Pages per bucket one sequence of {@code tokens} positions holds at its peak when it is computed from 0
     * in chunks of {@code chunk} positions (the last one shorter) and then decoded one position per step.
     * Exact for the manager's mapping: it replays the window groups' page rules on placeholder tables (best-
     * effort boundary windows are not demand); O(tokens / chunk) steps.
     */
    public long[] peakDemand(long tokens, int chunk) {
        if (tokens <= 0 || chunk <= 0) {
            throw new IllegalArgumentException("tokens and chunk must be positive: " + tokens + ", " + chunk);
        }
        long[] peak = new long[pages.length];
        long[] now = new long[pages.length];
        PageTable[] tables = new PageTable[windowKinds.length];
        for (int w = 0; w < tables.length; w++) {
            tables[w] = new PageTable();
        }
        for (long c = 0; c < tokens; ) {
            int n = (int) Math.min(chunk, tokens - c);
            Arrays.fill(now, 0);
            for (int bucket : compressedBuckets) {
                now[bucket] += CompressedGroups.ceilDiv(c + n, B);
            }
            for (int w = 0; w < tables.length; w++) {
                PageTable t = tables[w];
                WindowPages.mapPlaceholders(windowKinds[w], c, n, t);
                for (int i = 0; i < t.size(); i++) {
                    if (t.at(i) >= 0) {
                        now[windowBuckets[w]]++;
                    }
                }
            }
            for (int b = 0; b < peak.length; b++) {
                peak[b] = Math.max(peak[b], now[b]);
            }
            c += n;
            for (int w = 0; w < tables.length; w++) {
                KindLayout k = windowKinds[w];
                PageTable t = tables[w];
                t.dropFront((int) Math.min(t.size(), k.pageIndex(k.window().windowStart(c)) - t.base()));
            }
        }
        long[] decode = KvPoolSizes.demand(layout, tokens);
        for (int b = 0; b < peak.length; b++) {
            peak[b] = Math.max(peak[b], decode[b]);
        }
        return peak;
    }
}
