package io.strata.platform.engine.kv;

import io.strata.kv.KindLayout;

/**
 * How the window groups (SWA KV and the compressor states) of a request get and give back pages: which
 * virtual pages a step maps (the window that survives it; earlier positions of a long chunk stay -1),
 * where a page comes from (the request's spares first, then the pool) and where a released one goes (a
 * {@link BoundaryWindow} when it can serve a resume, else the request's spares, else the pool).
 *
 * <p>Spares: a decode step releases a window page every few positions and needs a new one as often (for
 * Flash an indexer-state page every 2 positions, a C4-state page every 4, an SWA page every 7), so it keeps
 * the pages it releases for its next allocations instead of going through the pool. A request keeps at most
 * its group's decode worst case of pages in table and spares together, so it never holds more than the pools
 * were split for. Not thread-safe, like the manager that owns it.
 */
final class WindowPages {

    private final KindLayout[] kindOf;
    private final PagePool[] poolOf;
    private final int[] windowGroups;
    private final BoundaryWindows boundaryWindows;
    private final boolean prefixCaching;
    /** Per window group: its spares' offset in {@link KvRequest#spares} and the group's decode worst case. */
    private final int[] spareFrom;
    private final int[] spareCap;
    private final int spareSlots;

    WindowPages(KindLayout[] kindOf, PagePool[] poolOf, int[] windowGroups, BoundaryWindows boundaryWindows,
                boolean prefixCaching) {
        this.kindOf = kindOf;
        this.poolOf = poolOf;
        this.windowGroups = windowGroups;
        this.boundaryWindows = boundaryWindows;
        this.prefixCaching = prefixCaching;
        this.spareFrom = new int[kindOf.length];
        this.spareCap = new int[kindOf.length];
        int n = 0;
        for (int g : windowGroups) {
            spareFrom[g] = n;
            spareCap[g] = kindOf[g].worstPages();
            n += spareCap[g];
        }
        this.spareSlots = n;
    }

    /** Size of a request's spare array (all window groups). */
    int spareSlots() {
        return spareSlots;
    }

    /**
     * Pages a step {@code [c, c+n)} maps for window group {@code g} beyond the table's end, spares included;
     * the caller has checked that the step reaches beyond the table.
     */
    int needed(KvRequest r, int g, long c, int n, int draft) {
        if (n == 1 && draft <= 0) {
            // a decode step: position c needs a page unless the window is empty after it
            return kindOf[g].window().windowStart(c + 1) > c ? 0 : 1;
        }
        return map(g, c, n, draft, r.tables[g], null, false);
    }

    /** Maps what {@link #needed} counted and returns the step's first slotted position. */
    long allocate(KvRequest r, int g, long c, int n, int draft) {
        KindLayout k = kindOf[g];
        if (n == 1 && draft <= 0) {
            appendPages(r.tables[g], k.pageIndex(c), k.pageIndex(c), r, g);
            return c;
        }
        map(g, c, n, draft, r.tables[g], r, true);
        return Math.max(c, slotsFrom(k, c, n, draft));
    }

    /**
     * The window pages a step {@code [c, c+n)} needs beyond the table's end: those of the window that
     * survives the step (positions before it inside the chunk stay -1, "do not persist"). Only counts
     * unless {@code append}; then appends the pages (-1 for the positions in between; the owner's spares
     * first, then pool pages; page 0 when {@code owner} is null, for the peak replay) and returns the count.
     * Boundary windows inside the chunk are not part of it: see {@link #mapBoundary}.
     */
    int map(int g, long c, int n, int draft, PageTable t, KvRequest owner, boolean append) {
        KindLayout k = kindOf[g];
        long from = Math.max(k.pageIndex(slotsFrom(k, c, n, draft)), t.end());
        long to = k.pageIndex(c + n - 1);
        if (from > to) {
            return 0;
        }
        if (append) {
            appendPages(t, from, to, owner, g);
        }
        return (int) (to - from + 1);
    }

    /**
     * Pages of group {@code g}'s last window before {@code boundary} that the step's table leaves unmapped
     * (those of the step's final window are mapped already); maps them when {@code map}.
     */
    int mapBoundary(KvRequest r, int g, long c, int n, int draft, long boundary, boolean map) {
        KindLayout k = kindOf[g];
        long slots = slotsFrom(k, c, n, draft);
        long lo = Math.max(c, k.window().windowStart(boundary));
        if (lo >= boundary || lo >= slots) {
            return 0;
        }
        long from = k.pageIndex(lo);
        long to = Math.min(k.pageIndex(boundary - 1), k.pageIndex(slots) - 1);
        PageTable t = r.tables[g];
        int missing = 0;
        for (long v = from; v <= to; v++) {
            if (t.page(v) < 0) {
                missing++;
                if (map) {
                    t.put(v, take(r, g));
                }
            }
        }
        return missing;
    }

    /**
     * Gives back a window page that fell behind the window: named in its boundary's window when it can
     * serve a resume, else kept as a spare while the request holds fewer than {@code room} pages of the
     * group beyond its table (so a decode step's turnover never reaches the pool), else returned.
     */
    void release(KvRequest r, int g, long v, int page, int room) {
        if (page < 0) {
            return;
        }
        boolean named = prefixCaching && boundaryWindows.offer(r, g, v, page);
        // A page the request allocated itself and no boundary window names is seen by nobody else: keep it.
        if (!named && r.spareCount[g] < room && kindOf[g].firstPosition(v) >= r.windowSharedUntil) {
            r.spares[spareFrom[g] + r.spareCount[g]++] = page;
            return;
        }
        poolOf[g].release(page);
    }

    /**
     * Room for spares when a step of {@code computed} positions leaves {@code kept} entries in group
     * {@code g}'s table: up to the decode worst case for a decode step, none for a longer step (so a
     * chunk's peak never includes spares and the peak replay stays exact).
     */
    int spareRoom(int g, int computed, int kept) {
        return computed == 1 ? spareCap[g] - kept : 0;
    }

    /** Returns every spare of the request to its pool. */
    void releaseSpares(KvRequest r) {
        for (int g : windowGroups) {
            for (int i = 0; i < r.spareCount[g]; i++) {
                poolOf[g].release(r.spares[spareFrom[g] + i]);
            }
            r.spareCount[g] = 0;
        }
    }

    /** The request's spares of a group (tests and leak checks). */
    int[] spares(KvRequest r, int g) {
        return java.util.Arrays.copyOfRange(r.spares, spareFrom[g], spareFrom[g] + r.spareCount[g]);
    }

    /** Maps virtual pages {@code [from, to]}, leaving -1 for unmapped ones between the table end and {@code from}. */
    private void appendPages(PageTable t, long from, long to, KvRequest owner, int g) {
        if (t.size() == 0 && from > t.base()) {
            t.reset(from);
        }
        while (t.end() < from) {
            t.append(-1);
        }
        for (long v = from; v <= to; v++) {
            t.append(owner == null ? 0 : take(owner, g));
        }
    }

    /** A page for a window group: the request's latest spare, else one from the pool. */
    private int take(KvRequest r, int g) {
        int n = r.spareCount[g];
        if (n > 0) {
            r.spareCount[g] = n - 1;
            return r.spares[spareFrom[g] + n - 1];
        }
        return poolOf[g].allocate(g);
    }

    /**
     * First position of a step that gets a window slot: everything from the earliest window that can
     * survive the step, i.e. the window at the shortest possible commit ({@code n - draft} positions).
     */
    private static long slotsFrom(KindLayout k, long c, int n, int draft) {
        return Math.max(c, k.window().windowStart(c + Math.max(1, n - Math.max(0, draft))));
    }
}
