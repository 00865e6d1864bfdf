package io.strata.backend.cpu.ops;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.Bf16;

/**
 * The lightning indexer's arithmetic, exactly as the reference rounds it: queries rotated (RoPE, then a
 * Walsh–Hadamard transform) and FP4-simulated; {@code score = bf16(Σ_h bf16(bf16(q_h·k)·w_h))} over the heads
 * whose dot product is positive, summed in head order; top-k keeps the higher score, and the lower index
 * among equal scores. Other backends are checked against these functions.
 */
public final class IndexerMath {
    private IndexerMath() {
    }

    /** The factor the head weights are scaled by: {@code headDim^-½ · heads^-½}. */
    public static float weightScale(int heads, int headDim) {
        return (float) (Math.pow(headDim, -0.5) * Math.pow(heads, -0.5));
    }

    /**
     * One token's query heads, in place: RoPE on each head's last {@code ropeDim} channels, the Hadamard
     * rotation, then the FP4 round trip (one scale per 32 channels) over the whole row.
     *
     * @param angleOff where this token's angles start in {@code cos}/{@code sin} ({@code ropeDim/2} of them)
     */
    public static void prepareQuery(float[] q, int off, int heads, int headDim, int ropeDim, float[] cos,
                                     float[] sin, int angleOff) {
        float hs = (float) (1.0 / Math.sqrt(headDim));
        for (int h = 0; h < heads; h++) {
            int o = off + h * headDim;
            Rope.rotate(q, o + headDim - ropeDim, cos, sin, angleOff, ropeDim / 2, false);
            Hadamard.transform(q, o, headDim, hs);
        }
        ActivationQuant.fp4RoundTrip(q, off, heads * headDim, 32);
    }

    /** A head weight as the scores use it: {@code bf16(w · scale)}. */
    public static float weight(float w, float scale) {
        return Bf16.round(w * scale);
    }

    /** The score of one key for one prepared query. */
    public static float score(float[] q, int qOff, float[] w, int wOff, float[] keys, int kOff, int heads,
                              int headDim) {
        float s = 0f;
        for (int h = 0; h < heads; h++) {
            float d = Bf16.round(VectorMath.dot(q, qOff + h * headDim, keys, kOff, headDim));
            if (d > 0f) {
                s += Bf16.round(d * w[wOff + h]);
            }
        }
        return Bf16.round(s);
    }

    /** The {@code k} highest of {@code scores[0..n)} into {@code out[off..]}, higher first, lower index first among equals. */
    public static void topK(float[] scores, int n, int k, int[] out, int off) {
        if (k == n) {
            for (int j = 0; j < n; j++) {
                out[off + j] = j;
            }
            return;
        }
        // partial selection: keep a sorted array of the best k (k is small relative to n in practice)
        int filled = 0;
        for (int j = 0; j < n; j++) {
            float s = scores[j];
            if (filled == k && !(s > scores[out[off + k - 1]])) {
                continue;
            }
            int pos = filled < k ? filled++ : k - 1;
            while (pos > 0 && s > scores[out[off + pos - 1]]) {
                out[off + pos] = out[off + pos - 1];
                pos--;
            }
            out[off + pos] = j;
        }
    }
}
