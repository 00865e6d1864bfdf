package io.strata.platform.engine.kv;

import io.strata.kv.KvLayout;

/**
 * The compressed groups (C4A and C128A entries, indexer keys): one page per 256-position block per group,
 * kept for the request's whole life and shared through the prefix cache block by block. Here: the prefix
 * hit (every compressed group must hold the block), pinning a hit at admission, allocating blocks, publishing
 * complete blocks, and giving pages back. Engine thread only.
 */
final class CompressedGroups implements GroupPages {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final int[] groups;
    private final PagePool[] poolOf;
    private final int[] bucketOf;
    private final boolean prefixCaching;

    /**
     * @param groups  the compressed groups' ids
     * @param poolOf  pool of each group (by group id)
     * @param bucketOf bucket ordinal of each group (by group id)
     */
    CompressedGroups(int[] groups, PagePool[] poolOf, int[] bucketOf, boolean prefixCaching) {
        this.groups = groups;
        this.poolOf = poolOf;
        this.bucketOf = bucketOf;
        this.prefixCaching = prefixCaching;
    }

    /** The group whose indexed block pages anchor boundary windows: the first compressed one, -1 when none. */
    int anchorGroup() {
        return groups.length > 0 ? groups[0] : -1;
    }

    /** Leading blocks, of the request's first {@code maxBlocks}, that every compressed group has cached. */
    int hitBlocks(KvRequest r, int maxBlocks) {
        int h = 0;
        while (h < maxBlocks) {
            for (int g : groups) {
                if (poolOf[g].lookup(new CacheKey(g, r.hashes.get(h), 0)) < 0) {
                    return h;
                }
            }
            h++;
        }
        return h;
    }

    /**
     * Adds to {@code need} (per bucket) what admitting with {@code m} and computing up to {@code to} takes:
     * new blocks past the hit, plus the hit's pages that pinning takes off the free lists (the evictable ones).
     */
    void admissionDemand(KvRequest r, PrefixMatch m, long to, long[] need) {
        long blocks = ceilDiv(to, B);
        for (int g : groups) {
            need[bucketOf[g]] += Math.max(0, blocks - m.sharedBlocks());
            for (int i = 0; i < m.sharedBlocks(); i++) {
                int p = poolOf[g].lookup(new CacheKey(g, r.hashes.get(i), 0));
                if (p >= 0 && poolOf[g].evictable(p)) {
                    need[bucketOf[g]]++;
                }
            }
        }
    }

    /** Pins the hit's blocks into the request's tables (the admission check said they fit). */
    void pin(KvRequest r, PrefixMatch m) {
        for (int g : groups) {
            PageTable t = r.tables[g];
            t.reset(0);
            for (int i = 0; i < m.sharedBlocks(); i++) {
                int p = poolOf[g].lookup(new CacheKey(g, r.hashes.get(i), 0));
                if (p < 0) {
                    throw new IllegalStateException(r + ": block " + i + " of group " + g + " left the cache between match and admit");
                }
                poolOf[g].touch(p);
                t.append(p);
            }
        }
    }

    @Override
    public int newPages(KvRequest r, int g, long c, int n) {
        return (int) Math.max(0, ceilDiv(c + n, B) - r.tables[g].end());
    }

    @Override
    public long allocate(KvRequest r, int g, long c, int n) {
        PageTable t = r.tables[g];
        PagePool pool = poolOf[g];
        for (long v = t.end(), last = ceilDiv(c + n, B); v < last; v++) {
            t.append(pool.allocate(g));
        }
        return r.slotsFrom[g];
    }

    /** Files the blocks completed below {@code end} in the prefix cache, once per block. */
    void publish(KvRequest r, long end, BlockHasher hasher) {
        if (!prefixCaching) {
            return;
        }
        int full = (int) (Math.min(end, r.tokenCount) / B);
        if (full <= r.publishedBlocks) {
            return;
        }
        r.ensureHashes(full, hasher);
        for (int b = r.publishedBlocks; b < full; b++) {
            for (int g : groups) {
                int p = r.tables[g].page(b);
                if (p >= 0) {
                    poolOf[g].publish(p, new CacheKey(g, r.hashes.get(b), 0));
                }
            }
        }
        r.publishedBlocks = full;
    }

    @Override
    public void refresh(KvRequest r, int g) {
        r.coveredEnd[g] = r.tables[g].end() * B;
        r.releaseAt[g] = Long.MAX_VALUE;
    }

    @Override
    public long keptFrom(int g, long end) {
        return 0;
    }

    @Override
    public void releaseTable(KvRequest r, int g) {
        PageTable t = r.tables[g];
        for (int i = t.size() - 1; i >= 0; i--) {
            int p = t.at(i);
            if (p >= 0) {
                poolOf[g].release(p);
            }
        }
        t.reset(0);
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
