package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.ops.HyperConnection;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

/**
 * One transformer block on the {@code hc} residual streams: HC-pre → attn_norm → attention → HC-post,
 * then HC-pre → ffn_norm → MoE → HC-post.
 */
public final class Block {
    private final int dim;
    private final int hc;
    private final int iters;
    private final float hcEps;
    private final float eps;
    private final float[] attnNorm;
    private final float[] ffnNorm;
    private final float[][] hcAttn;
    private final float[][] hcFfn;
    private final AttentionLayer attention;
    private final MoeLayer moe;
    private final Scratch scratch = new Scratch(3);

    Block(TensorSource src, ModelConfig cfg, LayerSpec spec) {
        dim = cfg.hiddenSize();
        hc = cfg.hyperConnections().mult();
        iters = cfg.hyperConnections().sinkhornIters();
        hcEps = (float) cfg.hyperConnections().eps();
        eps = (float) cfg.rmsNormEps();
        String p = spec.weightPrefix();
        attnNorm = Linears.floats(src, p + "attn_norm.weight", dim);
        ffnNorm = Linears.floats(src, p + "ffn_norm.weight", dim);
        int mix = (2 + hc) * hc;
        hcAttn = new float[][]{Linears.floats(src, p + "hc_attn_fn", mix * hc * dim),
            Linears.floats(src, p + "hc_attn_base", mix), Linears.floats(src, p + "hc_attn_scale", 3)};
        hcFfn = new float[][]{Linears.floats(src, p + "hc_ffn_fn", mix * hc * dim),
            Linears.floats(src, p + "hc_ffn_base", mix), Linears.floats(src, p + "hc_ffn_scale", 3)};
        attention = new AttentionLayer(src, cfg, spec);
        moe = new MoeLayer(src, cfg, spec);
    }

    public AttentionLayer attention() {
        return attention;
    }

    public MoeLayer moe() {
        return moe;
    }

    long weightBytesPerToken() {
        return attention.weightBytes() + moe.weightBytesPerToken();
    }

    long weightBytes() {
        return attention.weightBytes() + moe.weightBytes();
    }

    /**
     * @param h      {@code n × hc × dim} bf16 streams in
     * @param next   receives the block's output streams (must not alias {@code h})
     * @param tokens token ids (hash routing)
     */
    public void forward(float[] h, ChunkSpan span, int[] tokens, LayerCache cache, float[] next) {
        forward(h, span.length(), java.util.List.of(new AttnSlice(0, span, cache)), tokens, next);
    }

    /**
     * The block over a batch of sequences' rows ({@code slices} say which rows are whose).
     *
     * @param tokens token id of every row (hash routing)
     */
    public void forward(float[] h, int n, java.util.List<AttnSlice> slices, int[] tokens, float[] next) {
        int w = hc * dim;
        float[] mid = scratch.get(0, n * w);
        float[] x = scratch.get(1, n * dim);
        float[] y = scratch.get(2, n * dim);
        HyperConnection.Mix[] mixes = new HyperConnection.Mix[n];
        mixIn(h, n, hcAttn, attnNorm, x, mixes);
        attention.forward(x, n, slices, y);
        for (int t = 0; t < n; t++) {
            HyperConnection.post(y, t * dim, h, t * w, mixes[t], hc, dim, mid, t * w);
        }
        mixIn(mid, n, hcFfn, ffnNorm, x, mixes);
        moe.forward(x, n, tokens, y);
        for (int t = 0; t < n; t++) {
            HyperConnection.post(y, t * dim, mid, t * w, mixes[t], hc, dim, next, t * w);
        }
    }

    private void mixIn(float[] h, int n, float[][] hcw, float[] norm, float[] x, HyperConnection.Mix[] mixes) {
        int w = hc * dim;
        int rows = (2 + hc) * hc;
        float[] m = new float[rows];
        for (int t = 0; t < n; t++) {
            HyperConnection.mixes(h, t * w, w, hcw[0], rows, eps, m);
            HyperConnection.Mix mix = HyperConnection.Mix.allocate(hc);
            HyperConnection.split(m, hcw[2], hcw[1], hc, iters, hcEps, mix);
            mixes[t] = mix;
            HyperConnection.pre(h, t * w, mix.pre(), hc, dim, x, t * dim);
            RmsNorm.apply(x, t * dim, norm, eps, x, t * dim, dim);
        }
    }
}
