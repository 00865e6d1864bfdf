package io.strata.backend.cuda;

/**
 * Per-step RoPE rows for the kernels: for each token {@code [cos(a_0..a_{n-1}) | sin(a_0..a_{n-1})]}
 * with {@code a_i = fp32(pos) * freq_i} in fp32 and cos/sin correctly rounded to fp32 — exactly how the
 * reference builds its complex64 table, computed on the host so the GPU needs no double-precision trig.
 */
public final class RopeTables {
    private RopeTables() {
    }

    /**
     * @param freqs     the layer's fp32 frequencies (32 for a 64-channel rotary part)
     * @param positions one position per token
     * @return {@code positions.length * 2 * freqs.length} floats
     */
    public static float[] cosSin(float[] freqs, int[] positions) {
        int n = freqs.length;
        float[] out = new float[positions.length * 2 * n];
        for (int t = 0; t < positions.length; t++) {
            float p = (float) positions[t];
            int row = t * 2 * n;
            for (int i = 0; i < n; i++) {
                float angle = p * freqs[i];
                out[row + i] = (float) Math.cos(angle);
                out[row + n + i] = (float) Math.sin(angle);
            }
        }
        return out;
    }
}
