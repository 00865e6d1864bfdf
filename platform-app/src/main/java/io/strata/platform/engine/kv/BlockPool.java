package io.strata.platform.engine.kv;

import io.strata.kv.PageBucket;

/**
 * The pages of one bucket. Free pages sit in an intrusive doubly linked list (O(1) pop, unlink, push);
 * pages without cached content go to the front so they are reused first, cached ones to the back in
 * release order, so the least recently released cached page is evicted first. Eviction is lazy: a cached
 * page keeps its key until it is popped for reuse, and can be revived by a prefix hit until then.
 */
final class BlockPool {

    private final PageBucket bucket;
    private final int capacity;
    /**
     * Per page {@code [refs, owner, prev, next]} side by side, so touching a page costs one cache line
     * rather than four; the free-list sentinel is page {@code capacity}.
     */
    private final int[] meta;
    private static final int REFS = 0;
    private static final int OWNER = 1;
    private static final int PREV = 2;
    private static final int NEXT = 3;
    private final CacheKey[] keys;
    /** Fingerprint of each page's key, 0 when it caches nothing: eviction needs no walk to the key objects. */
    private final long[] fingerprints;
    private final PageIndex index;
    private final long[] inUseByGroup;
    private final int head;
    private int free;
    private int cachedFree;

    BlockPool(PageBucket bucket, int capacity, int groups) {
        if (capacity < 0) {
            throw new IllegalArgumentException("negative pool size for " + bucket);
        }
        this.bucket = bucket;
        this.capacity = capacity;
        this.meta = new int[4 * (capacity + 1)];
        this.keys = new CacheKey[capacity];
        this.fingerprints = new long[capacity];
        this.index = new PageIndex(capacity);
        this.inUseByGroup = new long[groups];
        this.head = capacity;
        for (int p = 0; p <= capacity; p++) {
            meta[4 * p + OWNER] = -1;
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
        return meta[4 * page + REFS];
    }

    int owner(int page) {
        return meta[4 * page + OWNER];
    }

    CacheKey key(int page) {
        return keys[page];
    }

    /** Pops the front free page for {@code group}, evicting what it cached; -1 when none is free. */
    int allocate(int group) {
        int p = meta[4 * head + NEXT];
        if (p == head) {
            return -1;
        }
        unlink(p);
        free--;
        long fp = fingerprints[p];
        if (fp != 0) {
            index.remove(fp, p);
            fingerprints[p] = 0;
            keys[p] = null;
            cachedFree--;
        }
        meta[4 * p + REFS] = 1;
        meta[4 * p + OWNER] = group;
        inUseByGroup[group]++;
        return p;
    }

    /** The page caching {@code key}, or -1. */
    int lookup(CacheKey key) {
        return index.get(key, keys);
    }

    /** Whether a hit on this page would take it off the free list. */
    boolean evictable(int page) {
        return meta[4 * page + REFS] == 0;
    }

    /** Adds a reference to a cached page (a prefix hit), reviving it from the free list if needed. */
    void touch(int page) {
        if (meta[4 * page + REFS] == 0) {
            unlink(page);
            free--;
            cachedFree--;
            inUseByGroup[meta[4 * page + OWNER]]++;
        }
        meta[4 * page + REFS]++;
    }

    /** Publishes a used page's content under {@code key}; ignored if another page already holds it. */
    void publish(int page, CacheKey key) {
        if (fingerprints[page] != 0 || meta[4 * page + REFS] == 0) {
            return;
        }
        long fp = PageIndex.fingerprint(key);
        if (index.putIfAbsent(key, fp, page, keys)) {
            keys[page] = key;
            fingerprints[page] = fp;
        }
    }

    /** Drops one reference; at zero the page returns to the free list (cached pages to the back). */
    void release(int page) {
        if (meta[4 * page + REFS] <= 0) {
            throw new IllegalStateException(bucket + " page " + page + " released while free (double free)");
        }
        if (--meta[4 * page + REFS] > 0) {
            return;
        }
        inUseByGroup[meta[4 * page + OWNER]]--;
        free++;
        if (fingerprints[page] != 0) {
            cachedFree++;
            linkBefore(page, head);
        } else {
            meta[4 * page + OWNER] = -1;
            linkBefore(page, meta[4 * head + NEXT]);
        }
    }

    private void set(int page, int field, int value) {
        meta[4 * page + field] = value;
    }

    private void unlink(int p) {
        int before = meta[4 * p + PREV];
        int after = meta[4 * p + NEXT];
        meta[4 * before + NEXT] = after;
        meta[4 * after + PREV] = before;
        meta[4 * p + PREV] = -1;
        meta[4 * p + NEXT] = -1;
    }

    private void linkBefore(int p, int at) {
        int before = meta[4 * at + PREV];
        meta[4 * before + NEXT] = p;
        meta[4 * p + PREV] = before;
        meta[4 * p + NEXT] = at;
        meta[4 * at + PREV] = p;
    }
}
