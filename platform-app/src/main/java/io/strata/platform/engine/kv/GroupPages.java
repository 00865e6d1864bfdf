package io.strata.platform.engine.kv;

/**
 * What differs between kinds of group: how a group of one kind maps a step's positions to pages, what it
 * gives back, and when its table next changes. {@link KvCacheManager} walks the groups in order and asks
 * each group's kind; it never branches on the kind itself. Two kinds: {@link CompressedGroups} (entries that
 * grow with the sequence, shared through the prefix cache block by block) and {@link WindowPages} (a sliding
 * window of keys or compressor state, released as the window moves). Engine thread only.
 */
interface GroupPages {

    /** Pages a step {@code [c, c+n)} maps for group {@code g} beyond its table's end, spares included. */
    int newPages(KvRequest r, int g, long c, int n);

    /**
     * Maps what {@link #newPages} counted; returns the step's first slotted position (earlier positions of
     * the step get no slot).
     */
    long allocate(KvRequest r, int g, long c, int n);

    /** Recomputes the group's step thresholds ({@code coveredEnd}, {@code releaseAt}) after its table changed. */
    void refresh(KvRequest r, int g);

    /** First position the group keeps after a commit ending at {@code end}: its window's start, 0 without a window. */
    long keptFrom(int g, long end);

    /** Returns every page of the group's table, tail first; the table is empty afterwards. */
    void releaseTable(KvRequest r, int g);
}
