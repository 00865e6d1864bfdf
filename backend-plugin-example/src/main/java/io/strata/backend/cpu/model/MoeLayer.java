package io.strata.backend.cpu.model;

import io.strata.model.format.Bf16;
import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.ops.Moe;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

/**
 * The MoE sub-layer: sqrt-softplus router (bias only for selection; hash layers take experts from
 * {@code tid2eid}), top-k renormalised and scaled, clamped-SwiGLU routed experts plus one shared expert.
 */
public final class MoeLayer {
    private final int dim;
    private final int experts;
    private final int k;
    private final int inter;
    private final float routeScale;
    private final float limit;
    private final DenseLinear gate;
    private final float[] bias;
    private final int[] tid2eid;
    private final Linear[] w1;
    private final Linear[] w2;
    private final Linear[] w3;
    private final Linear sw1;
    private final Linear sw2;
    private final Linear sw3;
    private final Scratch scratch = new Scratch(6);

    /** Routing result of a batch: expert ids and weights, {@code k} per token. */
    public record Routing(int[] experts, float[] weights) {
    }

    MoeLayer(TensorSource src, ModelConfig cfg, LayerSpec spec) {
        var m = cfg.moe();
        String p = spec.weightPrefix() + "ffn";
        dim = cfg.hiddenSize();
        experts = m.numRoutedExperts();
        k = m.numExpertsPerToken();
        inter = m.intermediateSize();
        routeScale = (float) m.routedScalingFactor();
        limit = (float) m.swigluLimit();
        gate = Linears.fp32(src, p + ".gate.weight", experts, dim);
        if (spec.hashRouted()) {
            tid2eid = src.tensor(p + ".gate.tid2eid").toInts();
            bias = null;
        } else {
            tid2eid = null;
            bias = Linears.floats(src, p + ".gate.bias", experts);
        }
        w1 = new Linear[experts];
        w2 = new Linear[experts];
        w3 = new Linear[experts];
        for (int e = 0; e < experts; e++) {
            String ep = p + ".experts." + e;
            w1[e] = Linears.bf16Out(src, ep + ".w1", inter, dim);
            w2[e] = Linears.bf16Out(src, ep + ".w2", dim, inter);
            w3[e] = Linears.bf16Out(src, ep + ".w3", inter, dim);
        }
        sw1 = Linears.bf16Out(src, p + ".shared_experts.w1", inter, dim);
        sw2 = Linears.bf16Out(src, p + ".shared_experts.w2", dim, inter);
        sw3 = Linears.bf16Out(src, p + ".shared_experts.w3", inter, dim);
    }

    /** Bytes one token reads: router, k routed experts and the shared expert. */
    long weightBytesPerToken() {
        return gate.weightBytes() + k * (w1[0].weightBytes() + w2[0].weightBytes() + w3[0].weightBytes())
            + sw1.weightBytes() + sw2.weightBytes() + sw3.weightBytes();
    }

    long weightBytes() {
        return gate.weightBytes() + experts * (w1[0].weightBytes() + w2[0].weightBytes() + w3[0].weightBytes())
            + sw1.weightBytes() + sw2.weightBytes() + sw3.weightBytes();
    }

    /** The gate: which experts each token uses and with what weight. */
    public Routing route(float[] x, int n, int[] tokens) {
        float[] scores = new float[n * experts];
        gate.forward(x, n, scores);
        int[] idx = new int[n * k];
        float[] wts = new float[n * k];
        float[] row = new float[experts];
        int[] pick = new int[k];
        float[] w = new float[k];
        for (int t = 0; t < n; t++) {
            for (int e = 0; e < experts; e++) {
                row[e] = Moe.sqrtSoftplus(scores[t * experts + e]);
            }
            if (tid2eid != null) {
                System.arraycopy(tid2eid, tokens[t] * k, pick, 0, k);
            } else {
                Moe.topK(row, bias, experts, k, pick);
            }
            Moe.routeWeights(row, pick, k, routeScale, w);
            System.arraycopy(pick, 0, idx, t * k, k);
            System.arraycopy(w, 0, wts, t * k, k);
        }
        return new Routing(idx, wts);
    }

    /**
     * @param x      {@code n × dim} bf16 (after ffn_norm)
     * @param tokens the token ids (hash routing)
     * @param out    receives {@code n × dim} bf16
     */
    public void forward(float[] x, int n, int[] tokens, float[] out) {
        Routing r = route(x, n, tokens);
        float[] y = scratch.zeroed(0, n * dim);
        int[] rowsOf = new int[n];
        float[] rowW = scratch.get(1, n);
        float[] xs = scratch.get(2, n * dim);
        float[] g = scratch.get(3, n * inter);
        float[] u = scratch.get(4, n * inter);
        float[] ys = scratch.get(5, n * dim);
        // experts in index order, each over the tokens routed to it, as the reference loops
        for (int e = 0; e < experts; e++) {
            int m = 0;
            for (int t = 0; t < n; t++) {
                for (int j = 0; j < k; j++) {
                    if (r.experts()[t * k + j] == e) {
                        rowsOf[m] = t;
                        rowW[m] = r.weights()[t * k + j];
                        System.arraycopy(x, t * dim, xs, m * dim, dim);
                        m++;
                    }
                }
            }
            if (m == 0) {
                continue;
            }
            expert(w1[e], w2[e], w3[e], xs, m, rowW, g, u, ys);
            for (int i = 0; i < m; i++) {
                int t = rowsOf[i];
                for (int d = 0; d < dim; d++) {
                    y[t * dim + d] += ys[i * dim + d];
                }
            }
        }
        java.util.Arrays.fill(rowW, 0, n, 1f);
        expert(sw1, sw2, sw3, x, n, rowW, g, u, ys);
        for (int i = 0; i < n * dim; i++) {
            out[i] = Bf16.round(y[i] + ys[i]);
        }
    }

    private void expert(Linear a, Linear b, Linear c, float[] xs, int m, float[] weights, float[] g, float[] u,
                        float[] ys) {
        a.forward(xs, m, g);
        c.forward(xs, m, u);
        for (int i = 0; i < m; i++) {
            Moe.swiglu(g, i * inter, u, i * inter, inter, limit, weights[i]);
        }
        b.forward(g, m, ys);
    }
}
