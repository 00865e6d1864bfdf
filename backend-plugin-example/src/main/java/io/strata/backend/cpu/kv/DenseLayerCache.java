package io.strata.backend.cpu.kv;

import java.util.Arrays;

/**
 * A plain fp32 cache that keeps every position: the simplest correct {@link LayerCache}, used by tests
 * as the yardstick the paged implementation must match exactly.
 */
public final class DenseLayerCache implements LayerCache {
    private final int headDim;
    private final int indexDim;
    private final int stateWidth;
    private final int indexStateWidth;
    private float[] window = new float[0];
    private float[] compressed = new float[0];
    private float[] indexKeys = new float[0];
    private float[] stateKv = new float[0];
    private float[] stateScore = new float[0];
    private float[] iStateKv = new float[0];
    private float[] iStateScore = new float[0];

    public DenseLayerCache(int headDim, int indexDim, int stateWidth, int indexStateWidth) {
        this.headDim = headDim;
        this.indexDim = indexDim;
        this.stateWidth = stateWidth;
        this.indexStateWidth = indexStateWidth;
    }

    private static float[] ensure(float[] a, long need) {
        if (a.length >= need) {
            return a;
        }
        return Arrays.copyOf(a, (int) Math.max(need, a.length * 2L));
    }

    @Override
    public void writeWindow(int pos, float[] src, int off) {
        window = ensure(window, (long) (pos + 1) * headDim);
        System.arraycopy(src, off, window, pos * headDim, headDim);
    }

    @Override
    public void readWindow(int pos, float[] dst, int off) {
        System.arraycopy(window, pos * headDim, dst, off, headDim);
    }

    @Override
    public void writeCompressed(int entry, float[] src, int off) {
        compressed = ensure(compressed, (long) (entry + 1) * headDim);
        System.arraycopy(src, off, compressed, entry * headDim, headDim);
    }

    @Override
    public void readCompressed(int entry, float[] dst, int off) {
        System.arraycopy(compressed, entry * headDim, dst, off, headDim);
    }

    @Override
    public void writeIndexerKey(int entry, float[] src, int off) {
        indexKeys = ensure(indexKeys, (long) (entry + 1) * indexDim);
        System.arraycopy(src, off, indexKeys, entry * indexDim, indexDim);
    }

    @Override
    public void readIndexerKey(int entry, float[] dst, int off) {
        System.arraycopy(indexKeys, entry * indexDim, dst, off, indexDim);
    }

    @Override
    public void writeState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width) {
        long need = (long) (pos + 1) * width;
        if (indexer) {
            iStateKv = ensure(iStateKv, need);
            iStateScore = ensure(iStateScore, need);
            System.arraycopy(kv, kvOff, iStateKv, pos * width, width);
            System.arraycopy(score, scoreOff, iStateScore, pos * width, width);
        } else {
            stateKv = ensure(stateKv, need);
            stateScore = ensure(stateScore, need);
            System.arraycopy(kv, kvOff, stateKv, pos * width, width);
            System.arraycopy(score, scoreOff, stateScore, pos * width, width);
        }
    }

    @Override
    public void readState(boolean indexer, int pos, float[] kv, int kvOff, float[] score, int scoreOff, int width) {
        System.arraycopy(indexer ? iStateKv : stateKv, pos * width, kv, kvOff, width);
        System.arraycopy(indexer ? iStateScore : stateScore, pos * width, score, scoreOff, width);
    }
}
