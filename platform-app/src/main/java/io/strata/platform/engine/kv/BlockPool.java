package io.strata.platform.engine.kv;

import io.strata.kv.PageBucket;

import java.util.Arrays;

/**
 * The pages of one bucket. Free pages sit in an intrusive doubly linked list (O(1) pop, unlink, push);
 * pages without cached content go to the front so they are reused first, cached ones to the back in
 * release order, so the least recently released cached page is evicted first. Eviction is lazy: a cached
 * page keeps its key until it is popped for reuse, and can be revived by a prefix hit until then.
 */
final class BlockPool {

    private final PageBucket bucket;
    private final int capacity;
    private final int[] refs;
    private final int[] owner;
    private final int[] prev;
    private final int[] next;
    private final CacheKey[] keys;
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
        this.refs = new int[capacity];
        this.owner = new int[capacity];
        this.prev = new int[capacity + 1];
        this.next = new int[capacity + 1];
        this.keys = new CacheKey[capacity];
        this.index = new PageIndex(capacity);
        this.inUseByGroup = new long[groups];
        this.head = capacity;
        Arrays.fill(owner, -1);
        prev[head] = head;
        next[head] = head;
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
        return refs[page];
    }

    int owner(int page) {
        return owner[page];
    }

    CacheKey key(int page) {
        return keys[page];
    }

    /** Pops the front free page for {@code group}, evicting what it cached; -1 when none is free. */
    int allocate(int group) {
        int p = next[head];
        if (p == head) {
            return -1;
        }
        unlink(p);
        free--;
        if (keys[p] != null) {
            index.remove(keys[p], p);
            keys[p] = null;
            cachedFree--;
        }
        refs[p] = 1;
        owner[p] = group;
        inUseByGroup[group]++;
        return p;
    }

    /** The page caching {@code key}, or -1. */
    int lookup(CacheKey key) {
        return index.get(key, keys);
    }

    /** Whether a hit on this page would take it off the free list. */
    boolean evictable(int page) {
        return refs[page] == 0;
    }

    /** Adds a reference to a cached page (a prefix hit), reviving it from the free list if needed. */
    void touch(int page) {
        if (refs[page] == 0) {
            unlink(page);
            free--;
            cachedFree--;
            inUseByGroup[owner[page]]++;
        }
        refs[page]++;
    }

    /** Publishes a used page's content under {@code key}; ignored if another page already holds it. */
    void publish(int page, CacheKey key) {
        if (keys[page] != null || refs[page] == 0) {
            return;
        }
        if (index.putIfAbsent(key, page, keys)) {
            keys[page] = key;
        }
    }

    /** Drops one reference; at zero the page returns to the free list (cached pages to the back). */
    void release(int page) {
        if (refs[page] <= 0) {
            throw new IllegalStateException(bucket + " page " + page + " released while free (double free)");
        }
        if (--refs[page] > 0) {
            return;
        }
        inUseByGroup[owner[page]]--;
        free++;
        if (keys[page] != null) {
            cachedFree++;
            linkBefore(page, head);
        } else {
            owner[page] = -1;
            linkBefore(page, next[head]);
        }
    }

    private void unlink(int p) {
        next[prev[p]] = next[p];
        prev[next[p]] = prev[p];
        prev[p] = -1;
        next[p] = -1;
    }

    private void linkBefore(int p, int at) {
        int before = prev[at];
        next[before] = p;
        prev[p] = before;
        next[p] = at;
        prev[at] = p;
    }
}
