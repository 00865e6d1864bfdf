package io.strata.kv;

/**
 * The seven per-layer caches of a DeepSeek-V4 attention stack.
 *
 * <p>Compressed kinds grow with the sequence: one page holds one logical block of
 * {@link KvLayout#BLOCK_POSITIONS} native positions ({@code 256 / ratio} entries). Window kinds hold a
 * bounded number of recent positions, one entry per native position; the pages behind their window are
 * released as the request advances.
 */
public enum CacheKind {
    /** Compressed main KV of a ratio-4 (CSA) layer: 64 entries per 256 positions. */
    C4A_KV(true, 4, "c4a_kv"),
    /** Compressed main KV of a ratio-128 (HCA) layer: 2 entries per 256 positions. */
    C128A_KV(true, 128, "c128a_kv"),
    /** Lightning-indexer keys of a ratio-4 layer: 64 entries per 256 positions. */
    C4_INDEXER_K(true, 4, "c4_indexer_k"),
    /** Raw (uncompressed) sliding-window KV; every layer has one, window-only and MTP layers included. */
    SWA_KV(false, 4, "swa_kv") {
        @Override
        public WindowRule window(int slidingWindow) {
            return new WindowRule(1, slidingWindow);
        }
    },
    /** Compressor state of the ratio-4 main stream, fp32 {@code [kv | score]}, window 2 x 4 = 8. */
    C4_STATE(false, 4, "c4_state"),
    /** Compressor state of the ratio-128 main stream, fp32 {@code [kv | score]}, window 1 x 128. */
    C128_STATE(false, 128, "c128_state"),
    /** Compressor state of the ratio-4 indexer stream, fp32 {@code [kv | score]}, window 2 x 4 = 8. */
    C4_INDEXER_STATE(false, 4, "c4_indexer_state");

    private final boolean compressed;
    private final int ratio;
    private final String metricName;

    CacheKind(boolean compressed, int ratio, String metricName) {
        this.compressed = compressed;
        this.ratio = ratio;
        this.metricName = metricName;
    }

    /** Whether the kind grows with the sequence (one page per logical block) rather than sliding. */
    public boolean compressed() {
        return compressed;
    }

    /** Native positions per entry: the compress ratio for compressed kinds, 1 for window kinds. */
    public int positionsPerEntry() {
        return compressed ? ratio : 1;
    }

    /** The compress ratio of the layer stream this cache belongs to (4 or 128; SWA reports 4, unused). */
    public int ratio() {
        return ratio;
    }

    /** Overlap factor {@code coff}: 2 for the overlapping ratio-4 compressors, else 1. */
    public int coff() {
        return ratio == 4 ? 2 : 1;
    }

    /** Lower-case name used in metric tags and JSON. */
    public String metricName() {
        return metricName;
    }

    /**
     * Which earlier positions a window kind must still hold. Compressor states keep {@code coff} blocks
     * of {@code ratio} positions, aligned to the ratio (the open entry and, for ratio 4, the previous one).
     *
     * @param slidingWindow the model's {@code sliding_window} (used by {@link #SWA_KV} only)
     * @throws IllegalStateException for compressed kinds
     */
    public WindowRule window(int slidingWindow) {
        if (compressed) {
            throw new IllegalStateException(this + " is not a window kind");
        }
        return new WindowRule(ratio, coff());
    }
}
