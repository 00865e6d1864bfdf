package io.strata.backend.cpu.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.spi.exec.SequenceChunk;

import java.lang.foreign.MemorySegment;

/**
 * One layer of one request, read and written in the {@link KvLayout}'s pools through the request's block
 * tables: position → virtual page ({@link KindLayout#pageIndex}) → physical page (block table) → bytes
 * ({@link KvLayout#dataOffset}).
 */
public final class PagedLayerCache implements LayerCache {
    private final KvPoolSet pools;
    private final KvLayout layout;
    private final int layer;
    private final SequenceChunk chunk;
    private final long requestId;
    private final int headDim;
    private final int ropeDim;
    private final int indexDim;
    private final Slot swa;
    private final Slot compressed;
    private final Slot indexKeys;
    private final Slot state;
    private final Slot indexState;

    /** A kind's group for this layer, or null when the layer has no such cache. */
    private record Slot(KindLayout kind, KindGroup group, MemorySegment pool) {
    }

    public PagedLayerCache(KvPoolSet pools, int layer, int ratio, SequenceChunk chunk) {
        this.pools = pools;
        this.layout = pools.layout();
        this.layer = layer;
        this.chunk = chunk;
        this.requestId = chunk.requestId();
        this.headDim = layout.shape().headDim();
        this.ropeDim = layout.shape().ropeHeadDim();
        this.indexDim = layout.shape().indexerHeadDim();
        swa = slot(CacheKind.SWA_KV);
        compressed = ratio == 4 ? slot(CacheKind.C4A_KV) : ratio == 128 ? slot(CacheKind.C128A_KV) : null;
        indexKeys = ratio == 4 ? slot(CacheKind.C4_INDEXER_K) : null;
        state = ratio == 4 ? slot(CacheKind.C4_STATE) : ratio == 128 ? slot(CacheKind.C128_STATE) : null;
        indexState = ratio == 4 ? slot(CacheKind.C4_INDEXER_STATE) : null;
    }

    private Slot slot(CacheKind kind) {
        KindLayout k = layout.kind(kind);
        for (KindGroup g : k.groups()) {
            if (g.slotOf(layer) >= 0) {
                return new Slot(k, g, pools.pool(g.bucket()));
            }
        }
        throw new IllegalArgumentException("layer " + layer + " has no " + kind + " group in the layout");
    }

    private int page(Slot s, long position) {
        long v = s.kind.pageIndex(position);
        int p = chunk.page(s.group.id(), v);
        if (p < 0) {
            throw new IllegalArgumentException("request " + requestId + ": position " + position + " of "
                + s.kind.kind() + " (layer " + layer + ") maps to virtual page " + v + ", which its block table "
                + "(group " + s.group.id() + ") does not map");
        }
        return p;
    }

    @Override
    public boolean hasWindowSlot(int pos) {
        return mapped(swa, pos);
    }

    @Override
    public boolean hasStateSlot(boolean indexer, int pos) {
        return mapped(indexer ? indexState : state, pos);
    }

    private boolean mapped(Slot s, int pos) {
        return chunk.page(s.group.id(), s.kind.pageIndex(pos)) >= 0;
    }

    private long data(Slot s, long position) {
        return layout.dataOffset(s.group, layer, page(s, position), position);
    }

    private long scale(Slot s, long position) {
        return layout.scaleOffset(s.group, layer, page(s, position), position);
    }

    @Override
    public void writeWindow(int pos, float[] src, int off) {
        EntryCodec.writeMain(swa.pool, data(swa, pos), scale(swa, pos), layout.precision().main(), src, off, headDim, ropeDim);
    }

    @Override
    public void readWindow(int pos, float[] dst, int off) {
        EntryCodec.readMain(swa.pool, data(swa, pos), scale(swa, pos), layout.precision().main(), dst, off, headDim, ropeDim);
    }

    @Override
    public void writeCompressed(int entry, float[] src, int off) {
        long pos = (long) entry * compressed.kind.kind().positionsPerEntry();
        EntryCodec.writeMain(compressed.pool, data(compressed, pos), scale(compressed, pos), layout.precision().main(),
            src, off, headDim, ropeDim);
    }

    @Override
    public void readCompressed(int entry, float[] dst, int off) {
        long pos = (long) entry * compressed.kind.kind().positionsPerEntry();
        EntryCodec.readMain(compressed.pool, data(compressed, pos), scale(compressed, pos), layout.precision().main(),
            dst, off, headDim, ropeDim);
    }

    @Override
    public void writeIndexerKey(int entry, float[] src, int off) {
        long pos = 4L * entry;
        EntryCodec.writeIndexer(indexKeys.pool, data(indexKeys, pos), scale(indexKeys, pos), layout.precision().indexer(),
            src, off, indexDim);
    }

    @Override
    public void readIndexerKey(int entry, float[] dst, int off) {
        long pos = 4L * entry;
        EntryCodec.readIndexer(indexKeys.pool, data(indexKeys, pos), scale(indexKeys, pos), layout.precision().indexer(),
            dst, off, indexDim);
    }

    @Override
    public void writeState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width) {
        Slot s = indexer ? indexState : state;
        EntryCodec.writeState(s.pool, data(s, pos), kv, kvOff, score, scoreOff, width);
    }

    @Override
    public void readState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width) {
        Slot s = indexer ? indexState : state;
        EntryCodec.readState(s.pool, data(s, pos), kv, kvOff, score, scoreOff, width);
    }
}
