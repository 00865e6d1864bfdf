package io.strata.backend.cpu.kv;

/**
 * What one attention layer keeps for one sequence, addressed by native token position or compressed
 * entry index. Implementations decide the bytes (the paged pools use the KvLayout entry formats); the
 * forward pass only sees fp32 values, already rounded the way the reference rounds them, so any
 * lossless format gives identical results.
 */
public interface LayerCache {

    /** Main KV row (headDim values, FP8-simulated no-RoPE part) of the token at {@code pos}. */
    void writeWindow(int pos, float[] src, int off);

    void readWindow(int pos, float[] dst, int off);

    /** Compressed main KV entry {@code entry} (headDim values). */
    void writeCompressed(int entry, float[] src, int off);

    void readCompressed(int entry, float[] dst, int off);

    /** Indexer key of compressed entry {@code entry} (index head dim values, FP4-simulated). */
    void writeIndexerKey(int entry, float[] src, int off);

    void readIndexerKey(int entry, float[] dst, int off);

    /**
     * Compressor state of one token: its projected kv and its gate score (ape already added), each
     * {@code width} = coff·headDim fp32 values. {@code indexer} selects the indexer's own compressor.
     */
    void writeState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width);

    void readState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width);

    /**
     * Whether a window (SWA) slot exists for {@code pos}. Inside a long chunk the cache manager maps only
     * the positions that must persist (the chunk's last window, and windows before prefix-cache boundaries
     * it keeps); the chunk's own queries read in-chunk keys from its activations.
     */
    default boolean hasWindowSlot(int pos) {
        return true;
    }

    /**
     * Whether a state slot exists for {@code pos}: the cache manager maps state pages only where they
     * must persist (the trailing open entry, and the last window before each prefix-cache boundary it
     * keeps), so optional writes check first.
     */
    default boolean hasStateSlot(boolean indexer, int pos) {
        return true;
    }
}
