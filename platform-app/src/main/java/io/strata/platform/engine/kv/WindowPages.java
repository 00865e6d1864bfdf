package io.strata.platform.engine.kv;

import io.strata.kv.KindLayout;

/**
 * The window groups (SWA keys and the compressor states): which virtual pages a step maps (the window that
 * survives it; earlier positions of a long chunk stay -1), where a page comes from (the request's spares
 * first, then the pool) and where a released one goes (a {@link BoundaryWindow} when it can serve a resume,
 * else the request's spares, else the pool); pinning a cached boundary window at admission; releasing
 * pages as the window moves past them.
 *
 * <p>Spares: a decode step releases a window page every few positions and needs a new one as often (for
 * Flash an indexer-state page every 2 positions, a C4-state page every 4, an SWA page every 7), so it keeps
 * the pages it releases for its next allocations instead of going through the pool. A request keeps at most
 * its group's decode worst case of pages in table and spares together, so it never holds more than the pools
 * were split for. Engine thread only.
 */
final class WindowPages implements GroupPages {

    private final KindLayout[] kindOf;
    private final PagePool[] poolOf;
    private final int[] bucketOf;
    private final int[] windowGroups;
    private final BoundaryWindows boundaryWindows;
    private final boolean prefixCaching;
    /** Per window group: its spares' offset in {@link KvRequest#spares} and the group's decode worst case. */
    private final int[] spareFrom;
    private final int[] spareCap;
    private final int spareSlots;

    WindowPages(KindLayout[] kindOf, PagePool[] poolOf, int[] bucketOf, int[] windowGroups,
                BoundaryWindows boundaryWindows, boolean prefixCaching) {
        this.kindOf = kindOf;
        this.poolOf = poolOf;
        this.bucketOf = bucketOf;
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

    // ---------------------------------------------------------------- admission

    /**
     * Adds to {@code need} (per bucket) what admitting at {@code from} and computing up to {@code to} takes:
     * the window that survives, plus the cached boundary window's pages that pinning takes off the free lists.
     */
    void admissionDemand(KvRequest r, PrefixMatch m, long to, long[] need) {
        long from = m.computeFrom();
        BoundaryWindow w = m.windowHit() ? boundaryWindows.find(r, from) : null;
        for (int g : windowGroups) {
            KindLayout k = kindOf[g];
            for (int i = 0; w != null && i < boundaryWindows.slotCount(g); i++) {
                int p = boundaryWindows.page(w, g, i);
                if (p >= 0 && poolOf[g].evictable(p)) {
                    need[bucketOf[g]]++;
                }
            }
            if (to > from) {
                long lo = Math.max(from, k.window().windowStart(to));
                need[bucketOf[g]] += k.pageIndex(to - 1) - k.pageIndex(lo) + 1;
            }
        }
    }

    /** Starts each window table at {@code m.computeFrom()}, with the cached window before it on a window hit. */
    void pin(KvRequest r, PrefixMatch m) {
        long from = m.computeFrom();
        boolean windows = m.windowHit() && boundaryWindows.slots() > 0;
        BoundaryWindow w = windows ? boundaryWindows.find(r, from) : null;
        if (windows && w == null) {
            throw new IllegalStateException(r + ": the window before " + from + " left the cache between match and admit");
        }
        for (int g : windowGroups) {
            PageTable t = r.tables[g];
            if (w != null && boundaryWindows.slotCount(g) > 0) {
                t.reset(boundaryWindows.firstPage(g, from));
                for (int i = 0; i < boundaryWindows.slotCount(g); i++) {
                    int p = boundaryWindows.page(w, g, i);
                    if (p < 0) {
                        throw new IllegalStateException(r + ": window page " + i + " of group " + g + " left the cache");
                    }
                    poolOf[g].touch(p);
                    t.append(p);
                }
            } else {
                t.reset(kindOf[g].pageIndex(from));
            }
        }
    }

    // ---------------------------------------------------------------- per step

    @Override
    public int newPages(KvRequest r, int g, long c, int n) {
        if (n == 1) {
            // a decode step: position c needs a page unless the window is empty after it
            return kindOf[g].window().windowStart(c + 1) > c ? 0 : 1;
        }
        KindLayout k = kindOf[g];
        long from = Math.max(k.pageIndex(slotsFrom(k, c, n)), r.tables[g].end());
        long to = k.pageIndex(c + n - 1);
        return from > to ? 0 : (int) (to - from + 1);
    }

    @Override
    public long allocate(KvRequest r, int g, long c, int n) {
        KindLayout k = kindOf[g];
        if (n == 1) {
            appendPages(r.tables[g], k.pageIndex(c), k.pageIndex(c), r, g);
            return c;
        }
        PageTable t = r.tables[g];
        long from = Math.max(k.pageIndex(slotsFrom(k, c, n)), t.end());
        long to = k.pageIndex(c + n - 1);
        if (from <= to) {
            appendPages(t, from, to, r, g);
        }
        return Math.max(c, slotsFrom(k, c, n));
    }

    /**
     * Maps, on a table of placeholder pages (0), the window pages a step {@code [c, c+n)} needs beyond the
     * table's end, as {@link #allocate} would: for replaying a sequence's page needs without pools.
     */
    static void mapPlaceholders(KindLayout k, long c, int n, PageTable t) {
        long from = Math.max(k.pageIndex(slotsFrom(k, c, n)), t.end());
        long to = k.pageIndex(c + n - 1);
        if (from > to) {
            return;
        }
        if (t.size() == 0 && from > t.base()) {
            t.reset(from);
        }
        while (t.end() < from) {
            t.append(-1);
        }
        for (long v = from; v <= to; v++) {
            t.append(0);
        }
    }

    /**
     * Counts into {@code need} (per bucket, less the request's spares) the pages of every group's last window
     * before {@code boundary} that a step {@code [c, c+n)} leaves unmapped; returns whether any is missing.
     */
    boolean boundaryNeed(KvRequest r, long c, int n, long boundary, long[] need) {
        boolean any = false;
        for (int g : windowGroups) {
            int missing = mapBoundary(r, g, c, n, boundary, false);
            any |= missing > 0;
            need[bucketOf[g]] += Math.max(0, missing - r.spareCount[g]);
        }
        return any;
    }

    /** Maps what {@link #boundaryNeed} counted, for every window group. */
    void mapBoundary(KvRequest r, long c, int n, long boundary) {
        for (int g : windowGroups) {
            mapBoundary(r, g, c, n, boundary, true);
        }
    }

    private int mapBoundary(KvRequest r, int g, long c, int n, long boundary, boolean map) {
        KindLayout k = kindOf[g];
        long slots = slotsFrom(k, c, n);
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
     * After a commit to {@code end} of {@code computed} positions: gives back the pages that fell wholly behind
     * the window of each group whose release threshold {@code end} reached.
     */
    void releaseBehindWindow(KvRequest r, long end, int computed) {
        boundaryWindows.endPass();
        for (int g : windowGroups) {
            if (end < r.releaseAt[g]) {
                continue;
            }
            KindLayout k = kindOf[g];
            PageTable t = r.tables[g];
            long cut = k.pageIndex(k.window().windowStart(end));
            int drop = (int) Math.min(t.size(), cut - t.base());
            // Decode steps keep what they release for their next pages, up to the group's decode worst case
            // with the table's remaining entries. Multi-position steps keep none, so a chunk's peak never
            // includes spares (peakDemand stays exact).
            int room = computed == 1 ? spareCap[g] - (t.size() - drop) : 0;
            for (int i = 0; i < drop; i++) {
                release(r, g, t.base() + i, t.at(i), room);
            }
            t.dropFront(drop);
            refresh(r, g);
        }
        boundaryWindows.endPass();
    }

    @Override
    public void refresh(KvRequest r, int g) {
        PageTable t = r.tables[g];
        KindLayout k = kindOf[g];
        r.coveredEnd[g] = k.firstPosition(t.end());
        if (t.size() == 0) {
            r.releaseAt[g] = Long.MAX_VALUE;
        } else {
            // smallest commit end whose window start passes the front page's end
            long e = k.endPosition(t.base());
            int stride = k.window().stride();
            r.releaseAt[g] = stride * (CompressedGroups.ceilDiv(e, stride) + k.window().blocks() - 1);
        }
    }

    @Override
    public long keptFrom(int g, long end) {
        return kindOf[g].window().windowStart(end);
    }

    @Override
    public void releaseTable(KvRequest r, int g) {
        PageTable t = r.tables[g];
        for (int i = t.size() - 1; i >= 0; i--) {
            release(r, g, t.base() + i, t.at(i), 0);
        }
        t.reset(0);
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

    /**
     * Gives back a window page that fell behind the window: named in its boundary's window when it can
     * serve a resume, else kept as a spare while the request holds fewer than {@code room} pages of the
     * group beyond its table (so a decode step's turnover never reaches the pool), else returned.
     */
    private void release(KvRequest r, int g, long v, int page, int room) {
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

    /** Maps virtual pages {@code [from, to]}, leaving -1 for unmapped ones between the table end and {@code from}. */
    private void appendPages(PageTable t, long from, long to, KvRequest owner, int g) {
        if (t.size() == 0 && from > t.base()) {
            t.reset(from);
        }
        while (t.end() < from) {
            t.append(-1);
        }
        for (long v = from; v <= to; v++) {
            t.append(take(owner, g));
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

    /** First position of a step {@code [c, c+n)} that gets a window slot: the window that survives it. */
    private static long slotsFrom(KindLayout k, long c, int n) {
        return Math.max(c, k.window().windowStart(c + Math.max(1, n)));
    }
}
