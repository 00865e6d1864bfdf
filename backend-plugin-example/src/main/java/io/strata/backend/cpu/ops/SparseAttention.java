package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/**
 * One head of sparse attention with a sink: softmax over the selected rows plus a per-head sink logit
 * that has no value vector. Logits and sums are fp32; probabilities enter the value sum as bf16 (as the
 * reference kernel feeds P to its PV GEMM); the output is bf16. K = V (one shared 512-d row).
 */
public final class SparseAttention {
    private SparseAttention() {
    }

    /**
     * @param q       the query head, bf16 values, at {@code qOff}
     * @param kv      KV rows, {@code dim} wide, row r at {@code r * dim}
     * @param idx     the rows this query attends, {@code n} of them (no skips)
     * @param scores  scratch of at least {@code n}
     * @param out     receives {@code dim} bf16 values at {@code outOff}
     */
    public static void attend(float[] q, int qOff, float[] kv, int[] idx, int n, int dim, float scale, float sink,
                              float[] scores, float[] out, int outOff) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            float z = VectorMath.dot(q, qOff, kv, idx[i] * dim, dim) * scale;
            scores[i] = z;
            max = Math.max(max, z);
        }
        java.util.Arrays.fill(out, outOff, outOff + dim, 0f);
        float denom = 0f;
        for (int i = 0; i < n; i++) {
            float p = (float) Math.exp(scores[i] - max);
            denom += p;
            VectorMath.axpy(Bf16.round(p), kv, idx[i] * dim, out, outOff, dim);
        }
        denom += (float) Math.exp(sink - max);
        for (int d = 0; d < dim; d++) {
            out[outOff + d] = Bf16.round(out[outOff + d] / denom);
        }
    }
}
