package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/**
 * Rotary embedding on interleaved pairs {@code (x[2i], x[2i+1])}, with optional YaRN frequency
 * interpolation, built as the reference builds its fp32 tables. One instance per (base, YaRN) pair;
 * angles are computed on demand from fp32 frequencies so no position limit applies.
 */
public final class Rope {
    private final int dim;
    private final float[] freqs;

    /**
     * @param dim             rotated channels (64)
     * @param base            theta (10000 for window-only layers, compress_rope_theta for compressed ones)
     * @param originalSeqLen  YaRN's original context; 0 disables YaRN
     * @param factor          YaRN factor
     * @param betaFast        YaRN beta_fast
     * @param betaSlow        YaRN beta_slow
     */
    public Rope(int dim, double base, int originalSeqLen, double factor, double betaFast, double betaSlow) {
        this.dim = dim;
        int half = dim / 2;
        freqs = new float[half];
        for (int i = 0; i < half; i++) {
            // fp32 like torch: base ** (2i/dim) with an fp32 exponent, then 1/x in fp32
            float exponent = (float) (2 * i) / dim;
            float pow = (float) Math.pow((float) base, exponent);
            freqs[i] = 1f / pow;
        }
        if (originalSeqLen > 0) {
            int low = Math.max((int) Math.floor(correctionDim(betaFast, dim, base, originalSeqLen)), 0);
            int high = Math.min((int) Math.ceil(correctionDim(betaSlow, dim, base, originalSeqLen)), dim - 1);
            float max = high == low ? high + 0.001f : high;
            for (int i = 0; i < half; i++) {
                float ramp = Math.clamp(((float) i - low) / (max - low), 0f, 1f);
                float smooth = 1f - ramp;
                freqs[i] = freqs[i] / (float) factor * (1f - smooth) + freqs[i] * smooth;
            }
        }
    }

    /** Plain RoPE without YaRN. */
    public static Rope plain(int dim, double base) {
        return new Rope(dim, base, 0, 1, 32, 1);
    }

    private static double correctionDim(double rotations, int dim, double base, int maxSeqLen) {
        return dim * Math.log(maxSeqLen / (rotations * 2 * Math.PI)) / (2 * Math.log(base));
    }

    public int dim() {
        return dim;
    }

    /** The fp32 frequency of pair {@code i}. */
    public float frequency(int i) {
        return freqs[i];
    }

    /** Fills {@code cos}/{@code sin} (length dim/2) for a position, as the reference's complex64 table row. */
    public void angles(long pos, float[] cos, float[] sin) {
        for (int i = 0; i < freqs.length; i++) {
            float angle = (float) pos * freqs[i];
            cos[i] = (float) Math.cos(angle);
            sin[i] = (float) Math.sin(angle);
        }
    }

    /**
     * Rotates {@code x[off..off+dim)} in place by the given angles (fp32 math, bf16 result);
     * {@code inverse} multiplies by the conjugate.
     */
    public static void rotate(float[] x, int off, float[] cos, float[] sin, boolean inverse) {
        rotate(x, off, cos, sin, 0, cos.length, inverse);
    }

    /** As {@link #rotate(float[], int, float[], float[], boolean)} with angles at {@code angleOff}. */
    public static void rotate(float[] x, int off, float[] cos, float[] sin, int angleOff, int half, boolean inverse) {
        for (int i = 0; i < half; i++) {
            float re = x[off + 2 * i];
            float im = x[off + 2 * i + 1];
            float c = cos[angleOff + i];
            float s = inverse ? -sin[angleOff + i] : sin[angleOff + i];
            x[off + 2 * i] = Bf16.round(re * c - im * s);
            x[off + 2 * i + 1] = Bf16.round(re * s + im * c);
        }
    }
}
