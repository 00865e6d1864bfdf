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

    /** A copy of the entries from {@link #base()} on. */
    public int[] toArray() {
        return Arrays.copyOf(pages, size);
    }

    /** Maps a virtual page that is not mapped yet, growing the table at either end with -1 entries. */
    void put(long virtual, int page) {
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
        base = newBase;
        size = 0;
    }

    void append(int page) {
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
