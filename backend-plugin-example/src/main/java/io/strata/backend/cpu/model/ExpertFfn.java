package io.strata.backend.cpu.model;

import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.ops.Moe;
import io.strata.backend.cpu.weights.TensorSource;

/**
 * One expert (routed or shared): {@code w2(weight · silu(min(w1 x, limit)) · clamp(w3 x, ±limit))}, the routing
 * weight applied before {@code w2} as the reference does. Each output row depends only on its own input row.
 */
public record ExpertFfn(Linear w1, Linear w2, Linear w3, float limit) {

    /** The expert under {@code prefix} ({@code ….experts.7} or {@code ….shared_experts}). */
    public static ExpertFfn load(TensorSource src, String prefix, int inter, int dim, float limit) {
        return new ExpertFfn(Linears.bf16Out(src, prefix + ".w1", inter, dim),
            Linears.bf16Out(src, prefix + ".w2", dim, inter),
            Linears.bf16Out(src, prefix + ".w3", inter, dim), limit);
    }

    public long weightBytes() {
        return w1.weightBytes() + w2.weightBytes() + w3.weightBytes();
    }

    /**
     * @param xs      {@code m × dim} input rows
     * @param weights the routing weight of each row
     * @param g       scratch, at least {@code m × inter}
     * @param u       scratch, at least {@code m × inter}
     * @param ys      receives {@code m × dim} bf16
     */
    public void forward(float[] xs, int m, float[] weights, float[] g, float[] u, float[] ys) {
        int inter = w1.outFeatures();
        w1.forward(xs, m, g);
        w3.forward(xs, m, u);
        for (int i = 0; i < m; i++) {
            Moe.swiglu(g, i * inter, u, i * inter, inter, limit, weights[i]);
        }
        w2.forward(g, m, ys);
    }
}
