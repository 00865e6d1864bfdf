package io.strata.platform.engine.kv;

import java.util.Arrays;

/**
 * The prefix-cache index of one pool: which page holds a {@link CacheKey}. Open addressing with linear
 * probing over a fixed table (a page holds at most one key, so entries never exceed the pool size and the
 * table never grows), keyed by a 64-bit fingerprint and confirmed by full key equality against the
 * page's own key, so a fingerprint collision can never return the wrong page. No allocation per operation.
 */
final class PageIndex {

    private final long[] fingerprints;
    private final int[] pages;
    private final int mask;

    PageIndex(int poolCapacity) {
        int n = Integer.highestOneBit(Math.max(8, poolCapacity) * 2 - 1) << 1;
        fingerprints = new long[n];
        pages = new int[n];
        Arrays.fill(pages, -1);
        mask = n - 1;
    }

    static long fingerprint(CacheKey k) {
        return k.hash.a() ^ (k.hash.b() * 0x9E3779B97F4A7C15L) ^ ((long) k.group << 48) ^ ((long) k.sub << 24);
    }

    private int home(long fp) {
        long h = fp * 0xC2B2AE3D27D4EB4FL;
        return (int) (h ^ (h >>> 31)) & mask;
    }

    /** The page whose key equals {@code k}, or -1. */
    int get(CacheKey k, CacheKey[] keys) {
        long fp = fingerprint(k);
        for (int i = home(fp); pages[i] >= 0; i = (i + 1) & mask) {
            if (fingerprints[i] == fp && k.equals(keys[pages[i]])) {
                return pages[i];
            }
        }
        return -1;
    }

    /** Maps {@code k} to {@code page} unless an equal key is present; returns whether it was added. */
    boolean putIfAbsent(CacheKey k, int page, CacheKey[] keys) {
        long fp = fingerprint(k);
        int i = home(fp);
        for (; pages[i] >= 0; i = (i + 1) & mask) {
            if (fingerprints[i] == fp && k.equals(keys[pages[i]])) {
                return false;
            }
        }
        fingerprints[i] = fp;
        pages[i] = page;
        return true;
    }

    /** Removes the entry of {@code page}, filed under key {@code k}. */
    void remove(CacheKey k, int page) {
        long fp = fingerprint(k);
        int i = home(fp);
        while (pages[i] != page) {
            if (pages[i] < 0) {
                throw new IllegalStateException("page " + page + " is not indexed under " + k);
            }
            i = (i + 1) & mask;
        }
        // backward-shift deletion keeps every probe chain unbroken without tombstones
        int hole = i;
        for (int j = (hole + 1) & mask; pages[j] >= 0; j = (j + 1) & mask) {
            int h = home(fingerprints[j]);
            boolean movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                fingerprints[hole] = fingerprints[j];
                pages[hole] = pages[j];
                hole = j;
            }
        }
        pages[hole] = -1;
    }
}
