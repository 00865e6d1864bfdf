package io.strata.platform.engine.kv;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

/**
 * Pages per bucket pool.
 *
 * <p>The split rule: a memory budget is divided in proportion to what one request at the target context
 * length needs from each bucket (compressed pages for {@code ceil(L/256)} blocks plus the window kinds'
 * worst case), so that at that length all three pools run out together. Failure mode: when the real mix
 * of lengths differs, one pool fills first while the others still have room (short requests are
 * window-heavy, long ones compressed-heavy); {@link io.strata.platform.planner.CapacityPlanner#stranding}
 * measures how much memory that strands.
 *
 * @param large  pages in the LARGE pool
 * @param middle pages in the MIDDLE pool
 * @param small  pages in the SMALL pool
 */
public record KvPoolSizes(int large, int middle, int small) {

    public KvPoolSizes {
        if (large < 0 || middle < 0 || small < 0) {
            throw new IllegalArgumentException("pool sizes must be >= 0: " + large + "/" + middle + "/" + small);
        }
    }

    public int pages(PageBucket bucket) {
        return switch (bucket) {
            case LARGE -> large;
            case MIDDLE -> middle;
            case SMALL -> small;
        };
    }

    /** Bytes these pools take under a layout. */
    public long bytes(KvLayout layout) {
        long sum = 0;
        for (BucketLayout b : layout.buckets()) {
            sum += pages(b.bucket()) * b.rowBytes();
        }
        return sum;
    }

    /** Pages one request of {@code context} positions holds in each bucket at its peak decode step. */
    public static long[] demand(KvLayout layout, long context) {
        long[] pages = new long[PageBucket.values().length];
        long blocks = (context + KvLayout.BLOCK_POSITIONS - 1) / KvLayout.BLOCK_POSITIONS;
        for (KindLayout k : layout.kinds()) {
            long perGroup = k.kind().compressed() ? blocks : k.worstPages();
            pages[k.bucket().ordinal()] += perGroup * k.groups().size();
        }
        return pages;
    }

    /** Splits {@code budgetBytes} by the demand of one request at {@code targetContext} positions. */
    public static KvPoolSizes forBudget(KvLayout layout, long budgetBytes, long targetContext) {
        if (budgetBytes <= 0 || targetContext <= 0) {
            throw new IllegalArgumentException("budget and target context must be positive");
        }
        long[] d = demand(layout, targetContext);
        double perRequest = 0;
        for (BucketLayout b : layout.buckets()) {
            perRequest += d[b.bucket().ordinal()] * (double) b.rowBytes();
        }
        double requests = budgetBytes / perRequest;
        int[] pages = new int[3];
        for (BucketLayout b : layout.buckets()) {
            long n = (long) Math.floor(requests * d[b.bucket().ordinal()]);
            pages[b.bucket().ordinal()] = Math.toIntExact(Math.min(Integer.MAX_VALUE - 1, n));
        }
        return new KvPoolSizes(pages[0], pages[1], pages[2]);
    }
}
