package io.strata.platform.engine.kv;

import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;

/**
 * The window side of the prefix cache. Resuming at a block boundary T needs, besides every compressed block
 * before T, the pages of the last window before T of each window group (SWA and compressor states): Flash
 * 2 × 19 SWA pages, 1 C4-state page and 2 indexer-state pages (the C128 state is empty at T). Those pages
 * are named, as their request releases them, in one {@link BoundaryWindow} per boundary, attached to T's
 * anchor: the indexed page of the anchor group (the first compressed group) for the block ending at T. A
 * resume that finds the anchor finds the window with it; when the anchor is evicted the window goes too.
 *
 * <p>Spans divide the 256-position block, so every boundary's window covers the same pages relative to it
 * and a {@link BoundaryWindow} has a fixed slot layout: per window group, {@link #slotCount} slots from
 * {@code slotFrom}. Not thread-safe, like the manager that owns it.
 */
final class BoundaryWindows {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final KindLayout[] kindOf;
    private final PagePool[] poolOf;
    private final int[] windowGroups;
    private final int anchorGroup;
    private final int[] slotFrom;
    private final int[] slotCount;
    private final int slots;
    private final BlockHasher hasher;
    /** The boundary window of the current release pass (a pass hands over a boundary's pages together). */
    private KvRequest heldFor;
    private long heldBoundary;
    private BoundaryWindow heldWindow;

    /**
     * @param kindOf       layout of each group
     * @param poolOf       pool of each group
     * @param windowGroups the window groups
     * @param anchorGroup  the group whose indexed block pages anchor the windows; -1 when there is none
     * @param hasher       the manager's block hasher (window pages are named under their block's hash)
     */
    BoundaryWindows(KindLayout[] kindOf, PagePool[] poolOf, int[] windowGroups, int anchorGroup, BlockHasher hasher) {
        this.kindOf = kindOf;
        this.poolOf = poolOf;
        this.windowGroups = windowGroups;
        this.anchorGroup = anchorGroup;
        this.hasher = hasher;
        this.slotFrom = new int[kindOf.length];
        this.slotCount = new int[kindOf.length];
        int n = 0;
        for (int g : windowGroups) {
            KindLayout k = kindOf[g];
            long lo = k.window().windowStart(B);
            slotFrom[g] = n;
            slotCount[g] = lo < B ? (int) (k.pageIndex(B - 1) - k.pageIndex(lo) + 1) : 0;
            n += slotCount[g];
        }
        this.slots = n;
    }

    /** Window pages one boundary needs over all groups (0: a resume never needs cached windows). */
    int slots() {
        return slots;
    }

    /** Window pages of group {@code g} one boundary needs. */
    int slotCount(int g) {
        return slotCount[g];
    }

    /** First virtual page of group {@code g}'s window before boundary {@code t}. */
    long firstPage(int g, long t) {
        KindLayout k = kindOf[g];
        return k.pageIndex(k.window().windowStart(t));
    }

    /** Whether every window page for resuming at boundary {@code t} is cached. */
    boolean cached(KvRequest r, long t) {
        BoundaryWindow w = find(r, t);
        if (w == null) {
            return slots == 0;
        }
        for (int g : windowGroups) {
            for (int i = 0; i < slotCount[g]; i++) {
                if (page(w, g, i) < 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The cached window pages for resuming at boundary {@code t}, or null (its anchor block is not cached). */
    BoundaryWindow find(KvRequest r, long t) {
        int anchor = anchorPage(r, (int) (t / B) - 1);
        return anchor < 0 ? null : poolOf[anchorGroup].window(anchor);
    }

    /** Page {@code i} of group {@code g}'s window in {@code w}, or -1 when it was reused since. */
    int page(BoundaryWindow w, int g, int i) {
        return w.page(slotFrom[g] + i, poolOf[g]);
    }

    /**
     * A window page the request is releasing: if it lies in the last window before its block's boundary
     * (the only pages a resume can use) and that block is cached, names it in the boundary's window. Returns
     * whether a boundary window names the page afterwards (then others may read it: it must go back to its
     * pool, not be reused by the request).
     */
    boolean offer(KvRequest r, int g, long v, int page) {
        if (slotCount[g] == 0 || anchorGroup < 0) {
            return false;
        }
        KindLayout k = kindOf[g];
        long block = k.firstPosition(v) / B;
        long boundary = (block + 1) * B;
        if (boundary > Math.min(r.computed, r.tokenCount) || k.endPosition(v) <= k.window().windowStart(boundary)) {
            return false;
        }
        long slot = v - firstPage(g, boundary);
        if (slot < 0 || slot >= slotCount[g]) {
            return false;
        }
        BoundaryWindow w;
        if (heldFor == r && heldBoundary == boundary) {
            w = heldWindow;
        } else {
            r.ensureHashes((int) block + 1, hasher);
            int anchor = anchorPage(r, (int) block);
            if (anchor < 0) {
                return false;
            }
            PagePool anchors = poolOf[anchorGroup];
            w = anchors.window(anchor);
            if (w == null) {
                w = new BoundaryWindow(slots);
                anchors.attachWindow(anchor, w);
            }
            heldFor = r;
            heldBoundary = boundary;
            heldWindow = w;
        }
        return w.offer(slotFrom[g] + (int) slot, page, poolOf[g]);
    }

    /** Ends a release pass: the next one looks anchors up again (pools may have changed in between). */
    void endPass() {
        heldFor = null;
        heldWindow = null;
    }

    /** The indexed page of the anchor group for {@code block} of the request's chain, or -1. */
    private int anchorPage(KvRequest r, int block) {
        if (anchorGroup < 0 || block < 0 || block >= r.hashes.size()) {
            return -1;
        }
        BlockHash h = r.hashes.get(block);
        PagePool pool = poolOf[anchorGroup];
        int own = r.tables[anchorGroup].page(block);
        if (own >= 0) {
            CacheKey key = pool.key(own);
            if (key != null && (key.hash == h || key.hash.equals(h))) {
                return own;
            }
        }
        return pool.lookup(new CacheKey(anchorGroup, h, 0));
    }
}
