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
        float[] out = new float[positions.length * 2 * freqs.length];
        for (int t = 0; t < positions.length; t++) {
            row(freqs, positions[t], out, t);
        }
        return out;
    }

    /**
     * The rows a compressor reads: for a token at {@code pos} that completes a compressed entry of {@code ratio}
     * positions ({@code (pos + 1) % ratio == 0}), the row of the entry's first position {@code pos + 1 - ratio};
     * every other row stays zero. The compressor kernels read a token's row only when it completes an entry, so
     * the trigonometry of the rest (3 of 4 rows at ratio 4, 127 of 128 at ratio 128) is not done.
     *
     * @return {@code positions.length * 2 * freqs.length} floats
     */
    public static float[] cosSinAtEntries(float[] freqs, int[] positions, int ratio) {
        float[] out = new float[positions.length * 2 * freqs.length];
        for (int t = 0; t < positions.length; t++) {
            int pos = positions[t];
            if ((pos + 1) % ratio == 0) {
                row(freqs, pos + 1 - ratio, out, t);
            }
        }
        return out;
    }

    /**
     * The rows of positions {@code from .. to - 1}, one after the other: what {@link #cosSin} gives for those
     * positions (a device table of every position up to a bound is filled from these, then read per step).
     */
    public static float[] rows(float[] freqs, int from, int to) {
        float[] out = new float[(to - from) * 2 * freqs.length];
        for (int p = from; p < to; p++) {
            row(freqs, p, out, p - from);
        }
        return out;
    }

    private static void row(float[] freqs, int position, float[] out, int t) {
        int n = freqs.length;
        float p = (float) position;
        int row = t * 2 * n;
        for (int i = 0; i < n; i++) {
            float angle = p * freqs[i];
            out[row + i] = (float) Math.cos(angle);
            out[row + n + i] = (float) Math.sin(angle);
        }
    }
}
