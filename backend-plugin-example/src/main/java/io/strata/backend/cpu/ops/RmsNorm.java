package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/** RMS normalisation as the reference does it: fp32 statistics, fp32 weight, bf16 result. */
public final class RmsNorm {
    private RmsNorm() {
    }

    /**
     * {@code out = bf16(w * x * rsqrt(mean(x²) + eps))}; {@code x} and {@code out} may alias.
     * {@code weight} may be null for the weightless variant (result still rounded to bf16).
     */
    public static void apply(float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        float inv = invRms(x, xOff, n, eps);
        for (int i = 0; i < n; i++) {
            float v = x[xOff + i] * inv;
            out[outOff + i] = Bf16.round(weight == null ? v : weight[i] * v);
        }
    }

    /** {@code rsqrt(mean(x²) + eps)} in fp32. */
    public static float invRms(float[] x, int off, int n, float eps) {
        float ss = VectorMath.sumSquares(x, off, n);
        return (float) (1.0 / Math.sqrt(ss / n + eps));
    }

    /**
     * The per-head query normalisation, which the reference runs in bf16 arithmetic on a bf16
     * tensor: {@code q *= rsqrt(mean(q²) + eps)} with each intermediate rounded to bf16.
     */
    public static void headNormBf16(float[] q, int off, int n, float eps) {
        float ss = 0f;
        for (int i = off; i < off + n; i++) {
            ss += Bf16.round(q[i] * q[i]);
        }
        float mean = Bf16.round(ss / n);
        float r = Bf16.round((float) (1.0 / Math.sqrt(Bf16.round(mean + eps))));
        for (int i = off; i < off + n; i++) {
            q[i] = Bf16.round(q[i] * r);
        }
    }
}
