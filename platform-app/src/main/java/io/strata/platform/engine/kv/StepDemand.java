package io.strata.platform.engine.kv;

import io.strata.kv.PageBucket;

/**
 * New pages a batch of step allocations needs, per bucket. Reusable: {@link #clear()} it at the start of
 * each step and let {@link KvCacheManager#addDemand} accumulate into it, without allocating.
 */
public final class StepDemand {

    private final int[] pages = new int[PageBucket.values().length];

    public void clear() {
        java.util.Arrays.fill(pages, 0);
    }

    public int pages(PageBucket bucket) {
        return pages[bucket.ordinal()];
    }

    int pagesAt(int bucketOrdinal) {
        return pages[bucketOrdinal];
    }

    void add(int bucketOrdinal, int n) {
        pages[bucketOrdinal] += n;
    }

    @Override
    public String toString() {
        return "StepDemand[large=" + pages[0] + ", middle=" + pages[1] + ", small=" + pages[2] + "]";
    }
}
