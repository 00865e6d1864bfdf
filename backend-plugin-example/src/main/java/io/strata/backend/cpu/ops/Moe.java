package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/** Routing and the expert activation of DeepSeek-V4's MoE. */
public final class Moe {
    private Moe() {
    }

    /** {@code sqrt(softplus(x))} in fp32, with torch's softplus threshold (x > 20 → x). */
    public static float sqrtSoftplus(float x) {
        double sp = x > 20f ? x : Math.log1p(Math.exp(x));
        return (float) Math.sqrt((float) sp);
    }

    /**
     * Indices of the {@code k} largest {@code values[i] + bias[i]} (bias may be null), highest first,
     * lower index first on exact ties.
     */
    public static void topK(float[] values, float[] bias, int n, int k, int[] out) {
        for (int j = 0; j < k; j++) {
            int best = -1;
            float bestV = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) {
                float v = bias == null ? values[i] : values[i] + bias[i];
                if ((best < 0 || v > bestV) && !contains(out, j, i)) {
                    best = i;
                    bestV = v;
                }
            }
            out[j] = best;
        }
    }

    private static boolean contains(int[] a, int n, int x) {
        for (int i = 0; i < n; i++) {
            if (a[i] == x) {
                return true;
            }
        }
        return false;
    }

    /**
     * Routing weights: the unbiased scores of the chosen experts, normalised to sum 1, times {@code routeScale}.
     */
    public static void routeWeights(float[] scores, int[] idx, int k, float routeScale, float[] weights) {
        float sum = 0f;
        for (int j = 0; j < k; j++) {
            weights[j] = scores[idx[j]];
            sum += weights[j];
        }
        for (int j = 0; j < k; j++) {
            weights[j] = weights[j] / sum * routeScale;
        }
    }

    /**
     * The clamped SwiGLU of one expert in fp32: {@code w · silu(min(gate, limit)) · clamp(up, ±limit)},
     * written into {@code gate} and rounded to bf16 (the input of {@code w2}). A limit ≤ 0 disables clamping.
     */
    public static void swiglu(float[] gate, float[] up, int n, float limit, float weight) {
        swiglu(gate, 0, up, 0, n, limit, weight);
    }

    /** As {@link #swiglu(float[], float[], int, float, float)} on {@code gate[gOff..]} and {@code up[uOff..]}. */
    public static void swiglu(float[] gate, int gOff, float[] up, int uOff, int n, float limit, float weight) {
        for (int i = 0; i < n; i++) {
            float g = gate[gOff + i];
            float u = up[uOff + i];
            if (limit > 0) {
                u = Math.clamp(u, -limit, limit);
                g = Math.min(g, limit);
            }
            float silu = g / (1f + (float) Math.exp(-g));
            gate[gOff + i] = Bf16.round(weight * (silu * u));
        }
    }
}
