package io.strata.platform.engine.kv;

import io.strata.kv.PageBucket;

/**
 * The pages of one bucket. Free pages sit in an intrusive doubly linked list (O(1) pop, unlink, push);
 * pages without cached content go to the front so they are reused first, cached ones to the back in
 * release order, so the least recently released cached page is evicted first. Eviction is lazy: a cached
 * page keeps its content until it is popped for reuse, and can be revived by a prefix hit until then.
 *
 * <p>A page caches content in one of two ways: a compressed block page is filed in the prefix
 * {@link PageIndex} under its {@link CacheKey}; a window page is held by a {@link BoundaryWindow} attached to
 * its boundary's anchor page and is named there by (page, generation). Every pop bumps the page's
 * generation, so evicting a window page is one counter increment and stale attachments fail their check.
 */
final class PagePool {

    private final PageBucket bucket;
    private final int capacity;
    /**
     * Per page {@code [refs, owner, prev, next, fingerprint low, fingerprint high, generation, window-held]}
     * side by side (32 B, two pages per cache line), so touching a page, and checking or dropping what it
     * caches, costs one cache line rather than several; the free-list sentinel is page {@code capacity}. The
     * fingerprint is that of the page's {@link CacheKey} in the prefix index, 0 when it is not indexed;
     * window-held is 1 while a {@link BoundaryWindow} names the page.
     */
    private final int[] meta;
    private static final int S = 8;
    private static final int FP_LO = 4;
    private static final int FP_HI = 5;
    private static final int REFS = 0;
    private static final int OWNER = 1;
    private static final int PREV = 2;
    private static final int NEXT = 3;
    private static final int GEN = 6;
    private static final int HELD = 7;
    private final CacheKey[] keys;
    private final PageIndex index;
    private final long[] inUseByGroup;
    /** Window pages attached to anchor pages; allocated on first use (only the anchor bucket has any). */
    private BoundaryWindow[] windows;
    private final int head;
    private int free;
    private int cachedFree;
    /** Counts keys entering or leaving the index, so a reader can tell whether the indexed set changed. */
    private long indexChanges;

    PagePool(PageBucket bucket, int capacity, int groups) {
        if (capacity < 0) {
            throw new IllegalArgumentException("negative pool size for " + bucket);
        }
        this.bucket = bucket;
        this.capacity = capacity;
        this.meta = new int[S * (capacity + 1)];
        this.keys = new CacheKey[capacity];
        this.index = new PageIndex(capacity);
        this.inUseByGroup = new long[groups];
        this.head = capacity;
        for (int p = 0; p <= capacity; p++) {
            meta[S * p + OWNER] = -1;
        }
        set(head, PREV, head);
        set(head, NEXT, head);
        for (int p = 0; p < capacity; p++) {
            linkBefore(p, head);
        }
        free = capacity;
    }

    PageBucket bucket() {
        return bucket;
    }

    int capacity() {
        return capacity;
    }

    /** Free pages, cached ones included (they are evictable). */
    int free() {
        return free;
    }

    /** Free pages that still hold cached content. */
    int cachedFree() {
        return cachedFree;
    }

    int used() {
        return capacity - free;
    }

    long inUse(int group) {
        return inUseByGroup[group];
    }

    int refs(int page) {
        return meta[S * page + REFS];
    }

    int owner(int page) {
        return meta[S * page + OWNER];
    }

    /** Changes whenever a key enters or leaves the index. */
    long indexChanges() {
        return indexChanges;
    }

    /** Adds the block hash of every indexed whole-block page of {@code group} to {@code out}. */
    void indexedBlocks(int group, java.util.Collection<BlockHash> out) {
        for (CacheKey k : keys) {
            if (k != null && k.group == group && k.sub == 0) {
                out.add(k.hash);
            }
        }
    }

    CacheKey key(int page) {
        return keys[page];
    }

    /** Pops the front free page for {@code group}, evicting what it cached; -1 when none is free. */
    int allocate(int group) {
        int p = meta[S * head + NEXT];
        if (p == head) {
            return -1;
        }
        unlink(p);
        free--;
        int m = S * p;
        long fp = fingerprint(p);
        if (fp != 0) {
            index.remove(fp, p);
            indexChanges++;
            fingerprint(p, 0);
            keys[p] = null;
            if (windows != null) {
                windows[p] = null;
            }
            cachedFree--;
        } else if (meta[m + HELD] != 0) {
            meta[m + HELD] = 0;
            cachedFree--;
        }
        meta[m + GEN]++;
        meta[S * p + REFS] = 1;
        meta[S * p + OWNER] = group;
        inUseByGroup[group]++;
        return p;
    }

    /** Whether only its one user can see the page: one reference, not indexed, not named by a window (tests). */
    boolean exclusive(int page) {
        int m = S * page;
        return meta[m + REFS] == 1 && meta[m + HELD] == 0 && meta[m + FP_LO] == 0 && meta[m + FP_HI] == 0;
    }

    /** The page caching {@code key}, or -1. */
    int lookup(CacheKey key) {
        return index.get(key, keys);
    }

    /** Whether a hit on this page would take it off the free list. */
    boolean evictable(int page) {
        return meta[S * page + REFS] == 0;
    }

    /** Adds a reference to a cached page (a prefix hit), reviving it from the free list if needed. */
    void touch(int page) {
        if (meta[S * page + REFS] == 0) {
            unlink(page);
            free--;
            cachedFree--;
            inUseByGroup[meta[S * page + OWNER]]++;
        }
        meta[S * page + REFS]++;
    }

    /** Bumped every time the page is handed out, so a (page, generation) pair names one content. */
    int generation(int page) {
        return meta[S * page + GEN];
    }

    /**
     * Marks a used window page as holding cached content (a {@link BoundaryWindow} names it), so that at
     * release it goes to the cached end of the free list and counts as cached.
     */
    void holdForWindow(int page) {
        if (meta[S * page + REFS] > 0) {
            meta[S * page + HELD] = 1;
        }
    }

    /** The window pages attached to an anchor page, or null. */
    BoundaryWindow window(int anchor) {
        return windows == null ? null : windows[anchor];
    }

    /** Attaches a boundary's window pages to an indexed anchor page; dropped when the anchor is evicted. */
    void attachWindow(int anchor, BoundaryWindow w) {
        if (fingerprint(anchor) == 0) {
            throw new IllegalStateException(bucket + " page " + anchor + " is not indexed and cannot anchor a window");
        }
        if (windows == null) {
            windows = new BoundaryWindow[capacity];
        }
        windows[anchor] = w;
    }

    /** Publishes a used page's content under {@code key}; ignored if another page already holds it. */
    void publish(int page, CacheKey key) {
        if (fingerprint(page) != 0 || meta[S * page + REFS] == 0) {
            return;
        }
        long fp = PageIndex.fingerprint(key);
        if (index.putIfAbsent(key, fp, page, keys)) {
            indexChanges++;
            keys[page] = key;
            fingerprint(page, fp);
        }
    }

    /** Drops one reference; at zero the page returns to the free list (cached pages to the back). */
    void release(int page) {
        if (meta[S * page + REFS] <= 0) {
            throw new IllegalStateException(bucket + " page " + page + " released while free (double free)");
        }
        if (--meta[S * page + REFS] > 0) {
            return;
        }
        inUseByGroup[meta[S * page + OWNER]]--;
        free++;
        if (fingerprint(page) != 0 || meta[S * page + HELD] != 0) {
            cachedFree++;
            linkBefore(page, head);
        } else {
            meta[S * page + OWNER] = -1;
            linkBefore(page, meta[S * head + NEXT]);
        }
    }

    /**
     * Forgets every cached content (the backend lost the bytes, e.g. its worker process restarted): every page
     * leaves the prefix index, window attachments are dropped, and cached free pages become plain free pages at
     * the front of the free list. Generations are bumped so no (page, generation) name survives. Returns how
     * many pages held cached content.
     */
    int dropCached() {
        int dropped = 0;
        for (int p = 0; p < capacity; p++) {
            int m = S * p;
            long fp = fingerprint(p);
            if (fp == 0 && meta[m + HELD] == 0) {
                continue;
            }
            if (fp != 0) {
                index.remove(fp, p);
                fingerprint(p, 0);
                keys[p] = null;
            }
            if (windows != null) {
                windows[p] = null;
            }
            meta[m + HELD] = 0;
            meta[m + GEN]++;
            if (meta[m + REFS] == 0) {
                cachedFree--;
                unlink(p);
                meta[m + OWNER] = -1;
                linkBefore(p, meta[S * head + NEXT]);
            }
            dropped++;
        }
        return dropped;
    }

    private long fingerprint(int page) {
        return ((long) meta[S * page + FP_HI] << 32) | (meta[S * page + FP_LO] & 0xFFFF_FFFFL);
    }

    private void fingerprint(int page, long fp) {
        meta[S * page + FP_LO] = (int) fp;
        meta[S * page + FP_HI] = (int) (fp >>> 32);
    }

    private void set(int page, int field, int value) {
        meta[S * page + field] = value;
    }

    private void unlink(int p) {
        int before = meta[S * p + PREV];
        int after = meta[S * p + NEXT];
        meta[S * before + NEXT] = after;
        meta[S * after + PREV] = before;
        meta[S * p + PREV] = -1;
        meta[S * p + NEXT] = -1;
    }

    private void linkBefore(int p, int at) {
        int before = meta[S * at + PREV];
        meta[S * before + NEXT] = p;
        meta[S * p + PREV] = before;
        meta[S * p + NEXT] = at;
        meta[S * at + PREV] = p;
    }
}
