package io.strata.platform.engine.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.PageBucket;

import java.util.List;
import java.util.Map;

/**
 * Page accounting at one moment, immutable: the engine thread takes it after each step and publishes it, so
 * metrics and the console read it from any thread without touching the pools.
 *
 * @param buckets    per bucket the layout uses, in bucket order
 * @param pagesInUse pages referenced by live requests per cache kind, over all its groups
 */
public record KvUsage(List<BucketUsage> buckets, Map<CacheKind, Long> pagesInUse) {

    public static final KvUsage EMPTY = new KvUsage(List.of(), Map.of());

    public KvUsage {
        buckets = List.copyOf(buckets);
        pagesInUse = Map.copyOf(pagesInUse);
    }

    /**
     * Page counts of one bucket.
     *
     * @param total  pages in the pool
     * @param used   pages referenced by at least one request
     * @param cached free pages still holding prefix-cache content (evictable, count as free for admission)
     * @param free   pages neither used nor cached
     */
    public record BucketUsage(PageBucket bucket, long total, long used, long cached, long free) {
    }

    /** One bucket's counts; zeros when the layout has no such bucket. */
    public BucketUsage bucket(PageBucket bucket) {
        for (BucketUsage u : buckets) {
            if (u.bucket() == bucket) {
                return u;
            }
        }
        return new BucketUsage(bucket, 0, 0, 0, 0);
    }

    public long pagesInUse(CacheKind kind) {
        return pagesInUse.getOrDefault(kind, 0L);
    }

    public long totalPages() {
        return buckets.stream().mapToLong(BucketUsage::total).sum();
    }

    public long usedPages() {
        return buckets.stream().mapToLong(BucketUsage::used).sum();
    }

    public long cachedPages() {
        return buckets.stream().mapToLong(BucketUsage::cached).sum();
    }

    public long freePages() {
        return buckets.stream().mapToLong(BucketUsage::free).sum();
    }

    public double usedFraction() {
        long total = totalPages();
        return total == 0 ? 0 : (double) usedPages() / total;
    }

    /** No leak: every page is free or cached. */
    public boolean allFreeOrCached() {
        return usedPages() == 0 && cachedPages() + freePages() == totalPages();
    }
}
