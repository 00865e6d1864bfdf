package io.strata.backend.cuda;

/**
 * Where the kernels put one cache entry inside a page:
 * {@code data = page + (slot % entriesPerPage) * dataStride}, {@code scales = page + scaleBase +
 * (slot % entriesPerPage) * scaleStride}, {@code page = pool + (slot / entriesPerPage) * pageBytes}.
 *
 * @param pageBytes      bytes between pages (the bucket's padded page size)
 * @param entriesPerPage entries in one page
 * @param dataStride     bytes between two entries' values
 * @param scaleBase      offset of entry 0's scale bytes from the page start
 * @param scaleStride    bytes between two entries' scales
 */
public record EntryLayout(long pageBytes, int entriesPerPage, int dataStride, int scaleBase, int scaleStride) {
    /** Main/SWA FP8 entry: 448 e4m3 + 64 bf16 (576 B) then 7 ue8m0 + 1 pad (8 B). */
    public static final int MAIN_DATA_BYTES = 576;
    public static final int MAIN_SCALE_BYTES = 8;
    /** Indexer FP4 entry: 64 B of e2m1 nibbles then 4 ue8m0 bytes. */
    public static final int INDEXER_DATA_BYTES = 64;
    public static final int INDEXER_SCALE_BYTES = 4;

    public EntryLayout {
        if (pageBytes <= 0 || entriesPerPage <= 0 || dataStride <= 0 || scaleBase < 0 || scaleStride < 0) {
            throw new IllegalArgumentException("invalid entry layout: " + pageBytes + "/" + entriesPerPage + "/"
                    + dataStride + "/" + scaleBase + "/" + scaleStride);
        }
    }

    /** FlashMLA's page: all entries' 576-byte values first, then all 8-byte scale groups. */
    public static EntryLayout mainSplit(int entriesPerPage, long pageBytes) {
        return checked(new EntryLayout(pageBytes, entriesPerPage, MAIN_DATA_BYTES, entriesPerPage * MAIN_DATA_BYTES,
                MAIN_SCALE_BYTES), MAIN_DATA_BYTES + MAIN_SCALE_BYTES);
    }

    /** Indexer page: all entries' 64-byte values first, then all 4-byte scale groups. */
    public static EntryLayout indexerSplit(int entriesPerPage, long pageBytes) {
        return checked(new EntryLayout(pageBytes, entriesPerPage, INDEXER_DATA_BYTES,
                entriesPerPage * INDEXER_DATA_BYTES, INDEXER_SCALE_BYTES), INDEXER_DATA_BYTES + INDEXER_SCALE_BYTES);
    }

    /** Entries stored whole, one after another ({@code entryBytes} = 584 or 68). */
    public static EntryLayout packed(int entriesPerPage, long pageBytes, int dataBytes, int entryBytes) {
        return checked(new EntryLayout(pageBytes, entriesPerPage, entryBytes, dataBytes, entryBytes), entryBytes);
    }

    /**
     * The layout {@link io.strata.kv.KvLayout} gives a compressed or SWA kind: pages are bucket rows of
     * {@code rowBytes}; the caller adds the layer's slot offset ({@code slot * layerPageBytes}) to the pool
     * address. Slots passed to the kernels are {@code physicalPage * entriesPerPage + entryInPage}.
     */
    public static EntryLayout of(io.strata.kv.KindLayout kind, long rowBytes) {
        io.strata.kv.EntryFormat f = kind.format();
        int e = kind.entriesPerPage();
        return new EntryLayout(rowBytes, e, f.splitScales() ? f.dataBytes() : f.entryBytes(),
                kind.scaleOffset(0), f.splitScales() ? f.scaleBytes() : f.entryBytes());
    }

    private static EntryLayout checked(EntryLayout l, int entryBytes) {
        if ((long) l.entriesPerPage * entryBytes > l.pageBytes) {
            throw new IllegalArgumentException(l.entriesPerPage + " entries of " + entryBytes
                    + " bytes do not fit a page of " + l.pageBytes);
        }
        return l;
    }

    public long dataOffset(long slot) {
        return (slot / entriesPerPage) * pageBytes + (slot % entriesPerPage) * dataStride;
    }

    public long scaleOffset(long slot) {
        return (slot / entriesPerPage) * pageBytes + scaleBase + (slot % entriesPerPage) * scaleStride;
    }
}
