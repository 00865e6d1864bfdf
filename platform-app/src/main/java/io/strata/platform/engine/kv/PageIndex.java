package io.strata.platform.engine.kv;


/**
 * The prefix-cache index of one pool: which page holds a {@link CacheKey}. Open addressing with linear
 * probing over a fixed table (a page holds at most one key, so entries never exceed the pool size and the
 * table never grows), keyed by a 64-bit fingerprint and confirmed by full key equality against the
 * page's own key, so a fingerprint collision can never return the wrong page. No allocation per operation.
 *
 * <p>Each slot keeps its fingerprint and page side by side in one {@code long[]} (two longs), so a probe
 * costs one cache miss rather than two; the table is far larger than the CPU caches at real pool sizes,
 * and these misses are most of the cached decode step's bookkeeping (docs/benchmarks.md).
 */
final class PageIndex {

    private static final long EMPTY = -1;

    /** Slot {@code i}: fingerprint at {@code 2i}, page (or -1) at {@code 2i+1}. */
    private final long[] slots;
    private final int mask;

    PageIndex(int poolCapacity) {
        int n = Integer.highestOneBit(Math.max(8, poolCapacity) * 2 - 1) << 1;
        slots = new long[2 * n];
        for (int i = 0; i < n; i++) {
            slots[2 * i + 1] = EMPTY;
        }
        mask = n - 1;
    }

    /** The key's 64-bit fingerprint; never 0, so callers may use 0 for "no key". */
    static long fingerprint(CacheKey k) {
        long fp = k.hash.a() ^ (k.hash.b() * 0x9E3779B97F4A7C15L) ^ ((long) k.group << 48) ^ ((long) k.sub << 24);
        return fp == 0 ? 1 : fp;
    }

    private int home(long fp) {
        long h = fp * 0xC2B2AE3D27D4EB4FL;
        return (int) (h ^ (h >>> 31)) & mask;
    }

    private int page(int i) {
        return (int) slots[2 * i + 1];
    }

    /** The page whose key equals {@code k}, or -1. */
    int get(CacheKey k, CacheKey[] keys) {
        long fp = fingerprint(k);
        for (int i = home(fp); page(i) >= 0; i = (i + 1) & mask) {
            if (slots[2 * i] == fp && k.equals(keys[page(i)])) {
                return page(i);
            }
        }
        return -1;
    }

    /** Maps {@code k} to {@code page} unless an equal key is present; returns whether it was added. */
    boolean putIfAbsent(CacheKey k, int page, CacheKey[] keys) {
        return putIfAbsent(k, fingerprint(k), page, keys);
    }

    /** Like {@link #putIfAbsent(CacheKey, int, CacheKey[])} with the key's precomputed fingerprint. */
    boolean putIfAbsent(CacheKey k, long fp, int page, CacheKey[] keys) {
        int i = home(fp);
        for (; page(i) >= 0; i = (i + 1) & mask) {
            if (slots[2 * i] == fp && k.equals(keys[page(i)])) {
                return false;
            }
        }
        slots[2 * i] = fp;
        slots[2 * i + 1] = page;
        return true;
    }

    /** Removes the entry of {@code page}, filed under key {@code k}. */
    void remove(CacheKey k, int page) {
        remove(fingerprint(k), page);
    }

    /** Removes the entry of {@code page}, filed under fingerprint {@code fp}. */
    void remove(long fp, int page) {
        int i = home(fp);
        while (page(i) != page) {
            if (page(i) < 0) {
                throw new IllegalStateException("page " + page + " is not indexed under fingerprint " + fp);
            }
            i = (i + 1) & mask;
        }
        // backward-shift deletion keeps every probe chain unbroken without tombstones
        int hole = i;
        for (int j = (hole + 1) & mask; page(j) >= 0; j = (j + 1) & mask) {
            int h = home(slots[2 * j]);
            boolean movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                slots[2 * hole] = slots[2 * j];
                slots[2 * hole + 1] = slots[2 * j + 1];
                hole = j;
            }
        }
        slots[2 * hole + 1] = EMPTY;
    }

    /** Slots in the table (tests). */
    int slotCount() {
        return slots.length / 2;
    }
}
