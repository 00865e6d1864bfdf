package io.strata.backend.cpu.model;

import io.strata.model.format.Bf16;
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
    private final MoeRouter router;
    private final ExpertFfn[] routed;
    private final ExpertFfn shared;
    private final Scratch scratch = new Scratch(6);

    /** Routing result of a batch: expert ids and weights, {@code k} per token. */
    public record Routing(int[] experts, float[] weights) {
    }

    public MoeLayer(TensorSource src, ModelConfig cfg, LayerSpec spec) {
        var m = cfg.moe();
        String p = spec.weightPrefix() + "ffn";
        dim = cfg.hiddenSize();
        experts = m.numRoutedExperts();
        k = m.numExpertsPerToken();
        inter = m.intermediateSize();
        float limit = (float) m.swigluLimit();
        router = new MoeRouter(src, cfg, spec);
        routed = new ExpertFfn[experts];
        for (int e = 0; e < experts; e++) {
            routed[e] = ExpertFfn.load(src, p + ".experts." + e, inter, dim, limit);
        }
        shared = ExpertFfn.load(src, p + ".shared_experts", inter, dim, limit);
    }

    /** Bytes one token reads: router, k routed experts and the shared expert. */
    long weightBytesPerToken() {
        return router.weightBytes() + k * routed[0].weightBytes() + shared.weightBytes();
    }

    long weightBytes() {
        return router.weightBytes() + experts * routed[0].weightBytes() + shared.weightBytes();
    }

    /** The gate: which experts each token uses and with what weight. */
    public Routing route(float[] x, int n, int[] tokens) {
        return router.route(x, n, tokens);
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
            routed[e].forward(xs, m, rowW, g, u, ys);
            for (int i = 0; i < m; i++) {
                int t = rowsOf[i];
                for (int d = 0; d < dim; d++) {
                    y[t * dim + d] += ys[i * dim + d];
                }
            }
        }
        java.util.Arrays.fill(rowW, 0, n, 1f);
        shared.forward(x, n, rowW, g, u, ys);
        for (int i = 0; i < n * dim; i++) {
            out[i] = Bf16.round(y[i] + ys[i]);
        }
    }
}
