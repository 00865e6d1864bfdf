package io.strata.backend.cpu.model;

import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Moe;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

/**
 * The MoE gate of one layer: fp32 router, sqrt-softplus scores, top-k with the selection bias (or the
 * {@code tid2eid} table on hash-routed layers), weights renormalised and scaled. It reads only replicated
 * tensors, so every expert-parallel rank holds a copy and routes its own tokens.
 */
public final class MoeRouter {
    private final int experts;
    private final int k;
    private final float routeScale;
    private final DenseLinear gate;
    private final float[] bias;
    private final int[] tid2eid;

    public MoeRouter(TensorSource src, ModelConfig cfg, LayerSpec spec) {
        var m = cfg.moe();
        String p = spec.weightPrefix() + "ffn.gate";
        experts = m.numRoutedExperts();
        k = m.numExpertsPerToken();
        routeScale = (float) m.routedScalingFactor();
        gate = Linears.fp32(src, p + ".weight", experts, cfg.hiddenSize());
        if (spec.hashRouted()) {
            tid2eid = src.tensor(p + ".tid2eid").toInts();
            bias = null;
        } else {
            tid2eid = null;
            bias = Linears.floats(src, p + ".bias", experts);
        }
    }

    public int experts() {
        return experts;
    }

    /** Experts per token. */
    public int k() {
        return k;
    }

    long weightBytes() {
        return gate.weightBytes();
    }

    /** Which experts each of the {@code n} rows of {@code x} uses and with what weight ({@code k} per row). */
    public MoeLayer.Routing route(float[] x, int n, int[] tokens) {
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
        return new MoeLayer.Routing(idx, wts);
    }
}
