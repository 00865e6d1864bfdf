package io.strata.platform.engine.kv;

import java.util.Arrays;

/**
 * The window and compressor-state pages a request needs to resume at one block boundary T: for every
 * window group, the pages of {@code [windowStart(T), T)} in virtual order, each named by (page,
 * generation). It hangs off the boundary's anchor page (the indexed page of the block ending at T), so the
 * prefix index holds one entry per block rather than one per window page, and evicting a window page costs
 * nothing here: its generation moves on and the slot simply stops matching.
 *
 * <p>Several requests may release windows for the same boundary; a slot keeps the first valid page and is
 * refilled only once that page was reused.
 */
final class BoundaryWindow {

    private final int[] pages;
    private final int[] generations;

    BoundaryWindow(int slots) {
        pages = new int[slots];
        generations = new int[slots];
        Arrays.fill(pages, -1);
    }

    /** The page in {@code slot} if it still holds the content it was attached with, else -1. */
    int page(int slot, PagePool pool) {
        int p = pages[slot];
        return p >= 0 && pool.generation(p) == generations[slot] ? p : -1;
    }

    /**
     * Names {@code page} (used by the caller, who is about to release it) in an empty or stale slot; returns
     * whether the slot names this page afterwards (newly, or because a prefix hit shared it from here).
     */
    boolean offer(int slot, int page, PagePool pool) {
        int current = page(slot, pool);
        if (current >= 0) {
            return current == page;
        }
        pages[slot] = page;
        generations[slot] = pool.generation(page);
        pool.holdForWindow(page);
        return true;
    }
}
