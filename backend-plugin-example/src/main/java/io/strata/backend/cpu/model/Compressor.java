package io.strata.backend.cpu.model;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.Bf16;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Hadamard;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.kv.KvLayout;

/**
 * Gated pooling of {@code ratio} tokens into one KV entry. Ratio 4 overlaps: entry b pools the previous
 * block's first {@code headDim} channels and its own block's last {@code headDim} channels (8 candidates
 * per channel). Every token's projected kv and score live in the cache's compressor state, addressed by
 * position, so a chunk can start anywhere: positions before the chunk are read back from the state.
 */
final class Compressor {
    private final int ratio;
    private final int headDim;
    private final int coff;
    private final int width;
    private final boolean indexer;
    private final DenseLinear wkv;
    private final DenseLinear wgate;
    private final float[] ape;
    private final float[] norm;
    private final float eps;
    private final Rope rope;
    private final int ropeDim;
    private float[] kv = new float[0];
    private float[] score = new float[0];

    Compressor(TensorSource src, String prefix, int ratio, int headDim, int dim, boolean indexer, float eps, Rope rope) {
        this.ratio = ratio;
        this.headDim = headDim;
        this.coff = ratio == 4 ? 2 : 1;
        this.width = coff * headDim;
        this.indexer = indexer;
        this.wkv = Linears.fp32(src, prefix + ".wkv.weight", width, dim);
        this.wgate = Linears.fp32(src, prefix + ".wgate.weight", width, dim);
        this.ape = Linears.floats(src, prefix + ".ape", ratio * width);
        this.norm = Linears.floats(src, prefix + ".norm.weight", headDim);
        this.eps = eps;
        this.rope = rope;
        this.ropeDim = rope.dim();
    }

    int ratio() {
        return ratio;
    }

    long weightBytes() {
        return wkv.weightBytes() + wgate.weightBytes();
    }

    /**
     * Projects the chunk's tokens, emits every entry whose last token lies in {@code [p0, p0+n)}, and
     * keeps the state the next chunk will need.
     *
     * @param x  {@code n × dim} bf16 attention inputs of the chunk's positions
     */
    void run(float[] x, ChunkSpan span, LayerCache cache) {
        int n = span.length();
        int p0 = span.start();
        if (kv.length < n * width) {
            kv = new float[n * width];
            score = new float[n * width];
        }
        wkv.forward(x, n, kv);
        wgate.forward(x, n, score);
        for (int t = 0; t < n; t++) {
            int j = (p0 + t) % ratio;
            for (int c = 0; c < width; c++) {
                score[t * width + c] += ape[j * width + c];
            }
        }
        int p1 = p0 + n;
        float[] candKv = new float[2 * ratio * headDim];
        float[] candSc = new float[2 * ratio * headDim];
        float[] rowKv = new float[width];
        float[] rowSc = new float[width];
        float[] entry = new float[headDim];
        float[] cos = new float[ropeDim / 2];
        float[] sin = new float[ropeDim / 2];
        for (int b = Math.max(p0 / ratio, span.firstWritableEntry(ratio)); b < p1 / ratio; b++) {
            int count = 0;
            if (coff == 2 && b > 0) {
                for (int q = ratio * (b - 1); q < ratio * b; q++) {
                    fetch(q, span, cache, rowKv, rowSc);
                    System.arraycopy(rowKv, 0, candKv, count * headDim, headDim);
                    System.arraycopy(rowSc, 0, candSc, count * headDim, headDim);
                    count++;
                }
            }
            int half = coff == 2 ? headDim : 0;
            for (int q = ratio * b; q < ratio * b + ratio; q++) {
                fetch(q, span, cache, rowKv, rowSc);
                System.arraycopy(rowKv, half, candKv, count * headDim, headDim);
                System.arraycopy(rowSc, half, candSc, count * headDim, headDim);
                count++;
            }
            pool(candKv, candSc, count, entry);
            finish(entry, (long) ratio * b, cos, sin);
            if (indexer) {
                cache.writeIndexerKey(b, entry, 0);
            } else {
                cache.writeCompressed(b, entry, 0);
            }
        }
        // The state the next chunk needs (open entry, plus the previous block when overlapping) must persist.
        // The state just before each prefix-cache boundary is kept too, where the cache manager mapped it,
        // so a later request can resume at that boundary.
        int keepFrom = Math.max(p0, ratio * (p1 / ratio - (coff - 1)));
        int boundaryWindow = (coff - 1) * ratio;
        for (int q = p0; q < p1; q++) {
            boolean required = q >= keepFrom;
            boolean boundary = q % KvLayout.BLOCK_POSITIONS >= KvLayout.BLOCK_POSITIONS - boundaryWindow;
            if (required || (boundary && cache.hasStateSlot(indexer, q))) {
                cache.writeState(indexer, q, kv, (q - p0) * width, score, (q - p0) * width, width);
            }
        }
    }

    private void fetch(int q, ChunkSpan span, LayerCache cache, float[] rowKv, float[] rowSc) {
        int p0 = span.start();
        if (q < span.windowFloor()) {
            throw new IllegalArgumentException("compressor state of position " + q + " is below the window floor "
                + span.windowFloor() + ": a recompute must start where no open entry needs earlier state");
        }
        if (q >= p0) {
            System.arraycopy(kv, (q - p0) * width, rowKv, 0, width);
            System.arraycopy(score, (q - p0) * width, rowSc, 0, width);
        } else {
            cache.readState(indexer, q, rowKv, 0, rowSc, 0, width);
        }
    }

    /** Per-channel softmax over the candidates' scores, then the weighted sum of their kv (fp32). */
    private void pool(float[] candKv, float[] candSc, int count, float[] out) {
        for (int c = 0; c < headDim; c++) {
            float max = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < count; i++) {
                max = Math.max(max, candSc[i * headDim + c]);
            }
            float sum = 0f;
            for (int i = 0; i < count; i++) {
                sum += (float) Math.exp(candSc[i * headDim + c] - max);
            }
            float acc = 0f;
            for (int i = 0; i < count; i++) {
                float p = (float) Math.exp(candSc[i * headDim + c] - max) / sum;
                acc += candKv[i * headDim + c] * p;
            }
            out[c] = acc;
        }
    }

    /** bf16, RMSNorm, RoPE at the block's first position, then the cache format's simulation. */
    private void finish(float[] entry, long ropePos, float[] cos, float[] sin) {
        Bf16.roundInPlace(entry, 0, headDim);
        RmsNorm.apply(entry, 0, norm, eps, entry, 0, headDim);
        rope.angles(ropePos, cos, sin);
        Rope.rotate(entry, headDim - ropeDim, cos, sin, false);
        if (indexer) {
            Hadamard.transform(entry, 0, headDim, (float) (1.0 / Math.sqrt(headDim)));
            ActivationQuant.fp4RoundTrip(entry, 0, headDim, 32);
        } else {
            ActivationQuant.fp8RoundTrip(entry, 0, headDim - ropeDim, 64);
        }
    }
}
