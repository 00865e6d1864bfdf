package io.strata.backend.cpu.model;

import io.strata.model.format.ActivationQuant;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.ops.Parallel;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cpu.ops.SparseAttention;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.model.config.LayerKind;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

/**
 * One attention sub-layer: low-rank queries with per-head norm, one shared K=V head with RoPE on its last
 * 64 channels, a 128-token window plus (ratio 4) indexer-selected or (ratio 128) all compressed entries,
 * sparse attention with a per-head sink, inverse RoPE, grouped {@code wo_a} then {@code wo_b}.
 */
public final class AttentionLayer {
    private final int dim;
    private final int heads;
    private final int headDim;
    private final int ropeDim;
    private final int qLora;
    private final int groups;
    private final int oLora;
    private final int window;
    private final float eps;
    private final LayerKind kind;
    private final Linear wqA;
    private final float[] qNorm;
    private final Linear wqB;
    private final Linear wkv;
    private final float[] kvNorm;
    private final Linear[] woA;
    private final Linear woB;
    private final float[] sink;
    private final Rope rope;
    private final Compressor compressor;
    private final Indexer indexer;
    private final int indexTopk;
    /** Scratch reused across steps (steps run one at a time, see {@code ModelExecutor}). */
    private float[] rows = new float[0];
    private final Scratch scratch = new Scratch(9);

    AttentionLayer(TensorSource src, ModelConfig cfg, LayerSpec spec) {
        var a = cfg.attention();
        String p = spec.weightPrefix() + "attn";
        dim = cfg.hiddenSize();
        heads = a.numHeads();
        headDim = a.headDim();
        ropeDim = a.ropeHeadDim();
        qLora = a.qLoraRank();
        groups = a.oGroups();
        oLora = a.oLoraRank();
        window = a.slidingWindow();
        eps = (float) cfg.rmsNormEps();
        kind = spec.kind();
        var r = spec.rope();
        rope = r.yarn().map(y -> new Rope(r.dim(), r.theta(), y.originalMaxPositionEmbeddings(), y.factor(),
            y.betaFast(), y.betaSlow())).orElseGet(() -> Rope.plain(r.dim(), r.theta()));
        wqA = Linears.bf16Out(src, p + ".wq_a", qLora, dim);
        qNorm = Linears.floats(src, p + ".q_norm.weight", qLora);
        wqB = Linears.bf16Out(src, p + ".wq_b", heads * headDim, qLora);
        wkv = Linears.bf16Out(src, p + ".wkv", headDim, dim);
        kvNorm = Linears.floats(src, p + ".kv_norm.weight", headDim);
        woA = GroupedLinear.split(src, p + ".wo_a", groups, oLora, heads * headDim / groups);
        woB = Linears.bf16Out(src, p + ".wo_b", dim, groups * oLora);
        sink = Linears.floats(src, p + ".attn_sink", heads);
        compressor = kind.hasCompressor()
            ? new Compressor(src, p + ".compressor", kind.compressRatio(), headDim, dim, false, eps, rope) : null;
        indexTopk = cfg.indexer().topk();
        indexer = kind.hasIndexer()
            ? new Indexer(src, p + ".indexer", cfg.indexer().numHeads(), cfg.indexer().headDim(), indexTopk, qLora,
            dim, eps, rope) : null;
    }

    /** Grow-only buffer for the gathered KV rows: at long contexts it is the largest array of a step. */
    private float[] rowsScratch(int size) {
        if (rows.length < size) {
            rows = new float[Math.max(size, rows.length + rows.length / 2)];
        }
        return rows;
    }

    long weightBytes() {
        long b = wqA.weightBytes() + wqB.weightBytes() + wkv.weightBytes() + woB.weightBytes();
        for (Linear l : woA) {
            b += l.weightBytes();
        }
        if (compressor != null) {
            b += compressor.weightBytes();
        }
        if (indexer != null) {
            b += indexer.weightBytes();
        }
        return b;
    }

    /**
     * Runs the sub-layer for one sequence's tokens at the positions of {@code span}.
     *
     * @param x   {@code n × dim} bf16 (after attn_norm)
     * @param out receives {@code n × dim} bf16
     */
    public void forward(float[] x, ChunkSpan span, LayerCache cache, float[] out) {
        forward(x, span.length(), java.util.List.of(new AttnSlice(0, span, cache)), out);
    }

    /**
     * Runs the sub-layer for a batch of sequences' rows: the projections see all rows at once (each weight
     * read once per step), cache traffic, compression, indexing and attention run per sequence.
     *
     * @param x      {@code rows × dim} bf16 (after attn_norm)
     * @param slices which rows belong to which sequence, in row order, covering all rows
     * @param out    receives {@code rows × dim} bf16
     */
    public void forward(float[] x, int rows, java.util.List<AttnSlice> slices, float[] out) {
        int half = ropeDim / 2;
        float[] cos = scratch.get(0, rows * half);
        float[] sin = scratch.get(1, rows * half);
        float[] c1 = new float[half];
        float[] s1 = new float[half];
        for (AttnSlice sl : slices) {
            for (int t = 0; t < sl.span().length(); t++) {
                rope.angles(sl.span().start() + t, c1, s1);
                System.arraycopy(c1, 0, cos, (sl.row() + t) * half, half);
                System.arraycopy(s1, 0, sin, (sl.row() + t) * half, half);
            }
        }
        // queries
        float[] qr = scratch.get(2, rows * qLora);
        wqA.forward(x, rows, qr);
        for (int t = 0; t < rows; t++) {
            RmsNorm.apply(qr, t * qLora, qNorm, eps, qr, t * qLora, qLora);
        }
        int qw = heads * headDim;
        float[] q = scratch.get(3, rows * qw);
        wqB.forward(qr, rows, q);
        for (int t = 0; t < rows; t++) {
            for (int h = 0; h < heads; h++) {
                int off = t * qw + h * headDim;
                RmsNorm.headNormBf16(q, off, headDim, eps);
                Rope.rotate(q, off + headDim - ropeDim, cos, sin, t * half, half, false);
            }
        }
        // the shared K=V row of each new token
        float[] kv = scratch.get(4, rows * headDim);
        wkv.forward(x, rows, kv);
        for (int t = 0; t < rows; t++) {
            int off = t * headDim;
            RmsNorm.apply(kv, off, kvNorm, eps, kv, off, headDim);
            Rope.rotate(kv, off + headDim - ropeDim, cos, sin, t * half, half, false);
            ActivationQuant.fp8RoundTrip(kv, off, headDim - ropeDim, 64);
        }
        float[] o = scratch.get(5, rows * qw);
        for (AttnSlice sl : slices) {
            attendSequence(sl, slices.size() == 1, x, qr, q, kv, cos, sin, o);
        }
        // grouped low-rank output projection
        int gIn = qw / groups;
        float[] gx = scratch.get(6, rows * gIn);
        float[] gy = scratch.get(7, rows * oLora);
        float[] oa = scratch.get(8, rows * groups * oLora);
        for (int g = 0; g < groups; g++) {
            for (int t = 0; t < rows; t++) {
                System.arraycopy(o, t * qw + g * gIn, gx, t * gIn, gIn);
            }
            woA[g].forward(gx, rows, gy);
            for (int t = 0; t < rows; t++) {
                System.arraycopy(gy, t * oLora, oa, t * groups * oLora + g * oLora, oLora);
            }
        }
        woB.forward(oa, rows, out);
    }

    /** Cache writes, compression, indexing and sparse attention of one sequence's rows. */
    private void attendSequence(AttnSlice sl, boolean whole, float[] xAll, float[] qrAll, float[] q, float[] kvAll,
                                float[] cosAll, float[] sinAll, float[] o) {
        ChunkSpan span = sl.span();
        LayerCache cache = sl.cache();
        int n = span.length();
        int p0 = span.start();
        int r0 = sl.row();
        int half = ropeDim / 2;
        int qw = heads * headDim;
        float[] x = whole ? xAll : java.util.Arrays.copyOfRange(xAll, r0 * dim, (r0 + n) * dim);
        float[] qr = whole ? qrAll : java.util.Arrays.copyOfRange(qrAll, r0 * qLora, (r0 + n) * qLora);
        float[] cos = whole ? cosAll : java.util.Arrays.copyOfRange(cosAll, r0 * half, (r0 + n) * half);
        float[] sin = whole ? sinAll : java.util.Arrays.copyOfRange(sinAll, r0 * half, (r0 + n) * half);
        // the last window of the chunk must persist (the next step reads it); earlier rows only where the
        // cache manager kept a slot for them — this chunk's queries read them from kvAll
        int mustKeepFrom = Math.max(p0, p0 + n - (window - 1));
        for (int t = 0; t < n; t++) {
            int pos = p0 + t;
            if (pos >= mustKeepFrom || cache.hasWindowSlot(pos)) {
                cache.writeWindow(pos, kvAll, (r0 + t) * headDim);
            }
        }
        int p1 = p0 + n;
        int[] sel = null;
        int[] selCount = null;
        if (compressor != null) {
            compressor.run(x, span, cache);
            if (indexer != null) {
                sel = new int[n * indexTopk];
                selCount = new int[n];
                indexer.select(x, qr, span, cache, cos, sin, sel, selCount);
            }
        }
        // gather the rows this chunk can see: window positions, then the compressed entries it attends
        // (all visible ones for ratio 128, only the indexer's picks for ratio 4), each decoded once
        int wlo = Math.max(span.windowFloor(), p0 - window + 1);
        int nw = p1 - wlo;
        int nc = compressor != null ? p1 / compressor.ratio() : 0;
        int[] slotOf = new int[nc];
        int used = 0;
        if (sel != null) {
            java.util.Arrays.fill(slotOf, -1);
            for (int t = 0; t < n; t++) {
                for (int i = 0; i < selCount[t]; i++) {
                    int j = sel[t * indexTopk + i];
                    if (slotOf[j] < 0) {
                        slotOf[j] = used++;
                    }
                }
            }
        } else {
            for (int j = 0; j < nc; j++) {
                slotOf[j] = used++;
            }
        }
        float[] rowsKv = rowsScratch((nw + used) * headDim);
        for (int pos = wlo; pos < p0; pos++) {
            cache.readWindow(pos, rowsKv, (pos - wlo) * headDim);
        }
        System.arraycopy(kvAll, r0 * headDim, rowsKv, (p0 - wlo) * headDim, n * headDim);
        for (int j = 0; j < nc; j++) {
            if (slotOf[j] >= 0) {
                cache.readCompressed(j, rowsKv, (nw + slotOf[j]) * headDim);
            }
        }
        float scale = (float) (1.0 / Math.sqrt(headDim));
        int[] selF = sel;
        int[] selCountF = selCount;
        Parallel.range(n * heads, 2, (from, to) -> {
            int[] idx = new int[window + Math.max(nc, 1)];
            float[] scores = new float[idx.length];
            for (int th = from; th < to; th++) {
                int t = th / heads;
                int h = th % heads;
                int pos = p0 + t;
                int m = 0;
                for (int wp = Math.max(wlo, pos - window + 1); wp <= pos; wp++) {
                    idx[m++] = wp - wlo;
                }
                if (selF != null) {
                    for (int i = 0; i < selCountF[t]; i++) {
                        idx[m++] = nw + slotOf[selF[t * indexTopk + i]];
                    }
                } else if (compressor != null) {
                    int visible = (pos + 1) / compressor.ratio();
                    for (int j = 0; j < visible; j++) {
                        idx[m++] = nw + slotOf[j];
                    }
                }
                int qo = (r0 + t) * qw + h * headDim;
                SparseAttention.attend(q, qo, rowsKv, idx, m, headDim, scale, sink[h], scores, o, qo);
                Rope.rotate(o, qo + headDim - ropeDim, cosAll, sinAll, (r0 + t) * half, half, true);
            }
        });
    }
}
