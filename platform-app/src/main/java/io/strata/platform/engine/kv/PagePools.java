package io.strata.platform.engine.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The page pools, one per bucket the layout uses, and the one rule for whether pages fit. Engine thread only,
 * except {@link #fits(long[], long[])}, which is a pure function.
 */
final class PagePools {

    private final PagePool[] byBucket = new PagePool[PageBucket.values().length];
    private final long[] freeScratch = new long[PageBucket.values().length];

    PagePools(KvLayout layout, KvPoolSizes sizes, int groups) {
        for (PageBucket b : PageBucket.values()) {
            if (layout.hasBucket(b)) {
                byBucket[b.ordinal()] = new PagePool(b, sizes.pages(b), groups);
            }
        }
    }

    /** The pool of a bucket (by ordinal), null when the layout has no such bucket. */
    PagePool at(int bucket) {
        return byBucket[bucket];
    }

    PagePool of(PageBucket bucket) {
        return byBucket[bucket.ordinal()];
    }

    /** Whether {@code need} (per bucket ordinal) fits the pools' free pages now; cached free pages count as free. */
    boolean fitsNow(long[] need) {
        for (int b = 0; b < byBucket.length; b++) {
            freeScratch[b] = byBucket[b] == null ? 0 : byBucket[b].free();
        }
        return fits(need, freeScratch);
    }

    /** The fit rule: every bucket's need is within what it has ({@code available}, 0 for a bucket the layout lacks). */
    static boolean fits(long[] need, long[] available) {
        for (int b = 0; b < need.length; b++) {
            if (need[b] > 0 && need[b] > available[b]) {
                return false;
            }
        }
        return true;
    }

    /** Page accounting of every pool and, per cache kind, the pages its groups hold. */
    KvUsage usage(KindGroup[] groups) {
        List<KvUsage.BucketUsage> buckets = new ArrayList<>(byBucket.length);
        for (PageBucket b : PageBucket.values()) {
            PagePool p = byBucket[b.ordinal()];
            if (p != null) {
                buckets.add(new KvUsage.BucketUsage(b, p.capacity(), p.used(), p.cachedFree(), p.free() - p.cachedFree()));
            }
        }
        Map<CacheKind, Long> inUse = new EnumMap<>(CacheKind.class);
        for (int g = 0; g < groups.length; g++) {
            inUse.merge(groups[g].kind(), byBucket[groups[g].bucket().ordinal()].inUse(g), Long::sum);
        }
        return new KvUsage(buckets, inUse);
    }
}
