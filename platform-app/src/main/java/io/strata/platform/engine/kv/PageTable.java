package io.strata.platform.engine.kv;

import java.util.Arrays;

/**
 * One request's block table for one kind group: entry {@code i} is the physical page of virtual page
 * {@code base + i}, or -1 when that page is not held (skipped inside a long prefill chunk, or released
 * behind a window). Window groups advance {@code base} as they release, so the table stays window-sized.
 */
public final class PageTable {

    private long base;
    private int[] pages = new int[8];
    private int size;
    /** The entries as {@link #snapshot()} last handed them out; null once the table has changed since. */
    private int[] snapshot;

    /** Virtual index of entry 0. */
    public long base() {
        return base;
    }

    public int size() {
        return size;
    }

    /** One past the last virtual page held or skipped. */
    public long end() {
        return base + size;
    }

    /** Physical page of entry {@code i} (0-based from {@link #base()}), or -1. */
    public int at(int i) {
        return pages[i];
    }

    /** Physical page of a virtual page, or -1. */
    public int page(long virtual) {
        long i = virtual - base;
        return i < 0 || i >= size ? -1 : pages[(int) i];
    }

    /**
     * The entries from {@link #base()} on, in an array nobody may modify: the same array until the table changes.
     * A decode step hands every running request's tables to the backend, and most steps change none of them (a
     * compressed group gains a page every 256 positions, a window group moves once per page), so most steps
     * copy nothing — at 128K positions a compressed group's table is 512 entries per request and group.
     */
    public int[] snapshot() {
        if (snapshot == null) {
            snapshot = Arrays.copyOf(pages, size);
        }
        return snapshot;
    }

    /** Maps a virtual page that is not mapped yet, growing the table at either end with -1 entries. */
    void put(long virtual, int page) {
        snapshot = null;
        if (size == 0) {
            base = virtual;
        } else if (virtual < base) {
            int add = (int) (base - virtual);
            if (size + add > pages.length) {
                pages = Arrays.copyOf(pages, Math.max(pages.length * 2, size + add));
            }
            System.arraycopy(pages, 0, pages, add, size);
            Arrays.fill(pages, 0, add, -1);
            size += add;
            base = virtual;
        }
        while (end() <= virtual) {
            append(-1);
        }
        pages[(int) (virtual - base)] = page;
    }

    void reset(long newBase) {
        snapshot = null;
        base = newBase;
        size = 0;
    }

    void append(int page) {
        snapshot = null;
        if (size == pages.length) {
            pages = Arrays.copyOf(pages, size * 2);
        }
        pages[size++] = page;
    }

    /** Drops the first {@code n} entries (the caller released their pages). */
    void dropFront(int n) {
        if (n <= 0) {
            return;
        }
        snapshot = null;
        if (n >= size) {
            base += size;
            size = 0;
            return;
        }
        System.arraycopy(pages, n, pages, 0, size - n);
        size -= n;
        base += n;
    }
}
