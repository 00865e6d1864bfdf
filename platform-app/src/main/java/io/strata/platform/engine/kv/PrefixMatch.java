package io.strata.platform.engine.kv;

/**
 * The outcome of a prefix-cache lookup, in native positions.
 *
 * @param sharedBlocks leading 256-position blocks whose compressed pages are reused (never written)
 * @param computeFrom  first position the engine must compute; positions before it are served by the cache
 * @param windowHit    whether the window and state pages before {@code computeFrom} were cached too; when
 *                     false and {@code computeFrom > 0}, the engine recomputes {@code [computeFrom,
 *                     sharedBlocks*256)} writing only window and state pages
 */
public record PrefixMatch(int sharedBlocks, long computeFrom, boolean windowHit) {

    public static final PrefixMatch NONE = new PrefixMatch(0, 0, false);

    /** Positions whose compressed entries are shared. */
    public long sharedPositions() {
        return (long) sharedBlocks * io.strata.kv.KvLayout.BLOCK_POSITIONS;
    }

    /** Positions recomputed only to rebuild window and state pages. */
    public long recomputedPositions() {
        return sharedPositions() - computeFrom;
    }
}
