package io.strata.model.config;

/** The three attention flavours of DeepSeek-V4, chosen per layer by {@code compress_ratios}. */
public enum LayerKind {
    /** ratio 0: sliding-window attention only; RoPE θ = {@code rope_theta}, no YaRN. */
    WINDOW_ONLY(0),
    /** ratio 4 (CSA): window + overlapping stride-4 compressed stream + Lightning Indexer top-k. */
    C4A(4),
    /** ratio 128 (HCA): window + non-overlapping stride-128 compressed stream, every entry attended. */
    C128A(128);

    private final int compressRatio;

    LayerKind(int compressRatio) {
        this.compressRatio = compressRatio;
    }

    public int compressRatio() {
        return compressRatio;
    }

    public boolean hasCompressor() {
        return compressRatio > 0;
    }

    public boolean hasIndexer() {
        return this == C4A;
    }

    /**
     * Width multiplier of the compressor projections: 2 when consecutive blocks overlap (ratio 4, each
     * entry pools 8 tokens from two halves), else 1.
     */
    public int compressorWidthFactor() {
        return this == C4A ? 2 : 1;
    }

    /** The kind for a {@code compress_ratios} entry, or {@code null} for an unsupported ratio. */
    public static LayerKind forRatio(int ratio) {
        for (LayerKind kind : values()) {
            if (kind.compressRatio == ratio) {
                return kind;
            }
        }
        return null;
    }
}
