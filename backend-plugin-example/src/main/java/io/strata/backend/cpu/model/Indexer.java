package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.ops.IndexerMath;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.ops.Parallel;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cpu.weights.TensorSource;

/**
 * The Lightning Indexer of CSA layers: scores every visible compressed entry with
 * {@code Σ_h w_h · relu(q_h · k)} on Hadamard-rotated, FP4-simulated queries and keys, and keeps the top-k.
 */
final class Indexer {
    private final int heads;
    private final int headDim;
    private final int topk;
    private final Linear wqB;
    private final Linear weightsProj;
    private final Compressor compressor;
    private final Rope rope;
    private final float weightScale;
    private float[] q = new float[0];
    private float[] w = new float[0];
    private float[] keys = new float[0];

    Indexer(TensorSource src, String prefix, int heads, int headDim, int topk, int qLora, int dim, float eps, Rope rope) {
        this.heads = heads;
        this.headDim = headDim;
        this.topk = topk;
        this.wqB = Linears.bf16Out(src, prefix + ".wq_b", heads * headDim, qLora);
        this.weightsProj = Linears.bf16Out(src, prefix + ".weights_proj", heads, dim);
        this.compressor = new Compressor(src, prefix + ".compressor", 4, headDim, dim, true, eps, rope);
        this.rope = rope;
        this.weightScale = IndexerMath.weightScale(heads, headDim);
    }

    long weightBytes() {
        return wqB.weightBytes() + weightsProj.weightBytes() + compressor.weightBytes();
    }

    /**
     * Selects compressed entries for each query of the chunk.
     *
     * @param x     attention inputs {@code n × dim}
     * @param qr    normalised low-rank queries {@code n × qLora}
     * @param cos   per-token RoPE angles {@code n × ropeDim/2}
     * @param sel   receives per token up to {@code topk} entry indices, row stride {@code topk}
     * @param count receives the number selected per token
     */
    void select(float[] x, float[] qr, ChunkSpan span, LayerCache cache, float[] cos, float[] sin, int[] sel,
                int[] count) {
        int n = span.length();
        int p0 = span.start();
        compressor.run(x, span, cache);
        int qw = heads * headDim;
        if (q.length < n * qw) {
            q = new float[n * qw];
        }
        if (w.length < n * heads) {
            w = new float[n * heads];
        }
        wqB.forward(qr, n, q);
        weightsProj.forward(x, n, w);
        int half = rope.dim() / 2;
        for (int t = 0; t < n; t++) {
            IndexerMath.prepareQuery(q, t * qw, heads, headDim, rope.dim(), cos, sin, t * half);
            for (int h = 0; h < heads; h++) {
                w[t * heads + h] = IndexerMath.weight(w[t * heads + h], weightScale);
            }
        }
        int total = (p0 + n) / 4;
        if (keys.length < total * headDim) {
            keys = new float[total * headDim];
        }
        for (int j = 0; j < total; j++) {
            cache.readIndexerKey(j, keys, j * headDim);
        }
        Parallel.range(n, 4, (from, to) -> {
            float[] scores = new float[total];
            for (int t = from; t < to; t++) {
                int visible = (p0 + t + 1) / 4;
                for (int j = 0; j < visible; j++) {
                    scores[j] = IndexerMath.score(q, t * qw, w, t * heads, keys, j * headDim, heads, headDim);
                }
                int k = Math.min(topk, visible);
                IndexerMath.topK(scores, visible, k, sel, t * topk);
                count[t] = k;
            }
        });
    }
}
