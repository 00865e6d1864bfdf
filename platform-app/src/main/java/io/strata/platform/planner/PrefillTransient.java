package io.strata.platform.planner;

import io.strata.kv.BucketLayout;
import io.strata.kv.KvLayout;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PrefixMatch;

/**
 * Measures, with the real cache manager, the pages a prefill chunk holds only for the duration of its
 * step: pages held right after {@code allocate} minus pages held after {@code commit} (compressed pages
 * the chunk adds stay, so they cancel out). vLLM's figure is a page per chunk token for every window
 * group; ours is the previous window, kept readable while the chunk writes its new one.
 */
public final class PrefillTransient {

    private PrefillTransient() {
    }

    /** Transient bytes of a chunk of {@code chunk} positions that starts {@code start} positions in. */
    public static long measure(KvLayout layout, long start, int chunk) {
        long total = start + chunk;
        long[] d = KvPoolSizes.demand(layout, total);
        KvPoolSizes sizes = new KvPoolSizes(Math.toIntExact(2 * d[0] + 8), Math.toIntExact(2 * d[1] + 8),
                Math.toIntExact(2 * d[2] + 8));
        // prefix caching on, as served: its boundary windows are best effort, never part of what a step holds
        KvCacheManager m = new KvCacheManager(layout, sizes, true);
        int[] tokens = new int[Math.toIntExact(total)];
        KvRequest r = m.newRequest("probe", tokens, null);
        m.admit(r, PrefixMatch.NONE);
        if (start > 0) {
            if (!m.allocate(r, (int) start)) {
                throw new IllegalStateException("probe pools too small");
            }
            m.commit(r, (int) start);
        }
        if (!m.allocate(r, chunk)) {
            throw new IllegalStateException("probe pools too small");
        }
        long peak = usedBytes(m, layout);
        m.commit(r, chunk);
        long after = usedBytes(m, layout);
        m.free(r);
        return peak - after;
    }

    private static long usedBytes(KvCacheManager m, KvLayout layout) {
        long sum = 0;
        for (BucketLayout b : layout.buckets()) {
            sum += m.usage().bucket(b.bucket()).used() * b.rowBytes();
        }
        return sum;
    }
}
