package io.strata.kv;

import java.util.List;

/**
 * How one cache kind is paged.
 *
 * <p>Positions map to <em>virtual pages</em> of the request's block table for each of the kind's groups.
 * Positions are cut into spans of {@code spanPositions} (a divisor of 256, so no page straddles a
 * logical-block boundary and a prefix hit never shares a page that the new request writes); each span is
 * cut into {@code pagesPerSpan} pages of {@code positionsPerPage} positions, the last one possibly
 * shorter. Compressed kinds use one page per 256-position block.
 *
 * @param kind             the cache kind
 * @param format           entry bytes
 * @param layers           model layers that have this cache
 * @param bucket           pool the pages come from
 * @param positionsPerPage native positions per page (256 for compressed kinds)
 * @param entriesPerPage   entries per page ({@code positionsPerPage / positionsPerEntry})
 * @param spanPositions    positions per mapping period
 * @param pagesPerSpan     pages per mapping period
 * @param layerPageBytes   bytes one layer's page takes inside a row (aligned)
 * @param alignment        alignment of {@code layerPageBytes}
 * @param window           retention rule, {@code null} for compressed kinds
 * @param groups           the groups sharing block tables (one for compressed kinds)
 * @param worstPages       window kinds: most pages one group holds at any decode step; 0 for compressed
 */
public record KindLayout(CacheKind kind, EntryFormat format, List<Integer> layers, PageBucket bucket,
                         int positionsPerPage, int entriesPerPage, int spanPositions, int pagesPerSpan,
                         int layerPageBytes, int alignment, WindowRule window, List<KindGroup> groups,
                         int worstPages) {

    public KindLayout {
        layers = List.copyOf(layers);
        groups = List.copyOf(groups);
    }

    /** Virtual page index holding a native position. */
    public long pageIndex(long position) {
        return (position / spanPositions) * pagesPerSpan + (position % spanPositions) / positionsPerPage;
    }

    /** First native position of a virtual page. */
    public long firstPosition(long page) {
        return (page / pagesPerSpan) * spanPositions + (page % pagesPerSpan) * positionsPerPage;
    }

    /** One past the last native position of a virtual page. */
    public long endPosition(long page) {
        long spanEnd = (page / pagesPerSpan + 1) * spanPositions;
        return Math.min(firstPosition(page) + positionsPerPage, spanEnd);
    }

    /** Entry slot of a native position inside its page. */
    public int entryInPage(long position) {
        return (int) ((position % spanPositions) % positionsPerPage) / kind.positionsPerEntry();
    }

    /** Byte offset of an entry's values inside one layer's page. */
    public int dataOffset(int entry) {
        return format.dataOffset(entry, entriesPerPage);
    }

    /** Byte offset of an entry's scales inside one layer's page. */
    public int scaleOffset(int entry) {
        return format.scaleOffset(entry, entriesPerPage);
    }

    /** Unpadded bytes of one layer's page. */
    public long rawLayerPageBytes() {
        return format.rawPageBytes(entriesPerPage);
    }
}
