package io.strata.backend.cpu.ops;

/**
 * FP8 e4m3fn (bias 7, max 448, no infinities) and ue8m0 scales, as the reference's activation
 * quantization uses them. The simulation helpers return the dequantized value, which is what the
 * reference's fp32-accumulating GEMM multiplies: with power-of-two scales, {@code q * s} is exact.
 */
public final class Fp8 {
    public static final float E4M3_MAX = 448f;
    private static final float[] DECODE = new float[256];

    static {
        for (int b = 0; b < 256; b++) {
            DECODE[b] = decodeSlow(b);
        }
    }

    private Fp8() {
    }

    /** The value of an e4m3fn byte; 0x7f/0xff are NaN. */
    public static float decode(int b) {
        return DECODE[b & 0xff];
    }

    /** A copy of the 256-entry e4m3fn decode table (for kernels that want their own). */
    public static float[] decodeTable() {
        return DECODE.clone();
    }

    private static float decodeSlow(int b) {
        int sign = (b & 0x80) != 0 ? -1 : 1;
        int exp = (b >>> 3) & 0xf;
        int man = b & 7;
        if (exp == 15 && man == 7) {
            return Float.NaN;
        }
        float mag = exp == 0 ? man * 0x1p-9f : Math.scalb(1f + man / 8f, exp - 7);
        return sign * mag;
    }

    /**
     * Rounds {@code x} to the nearest e4m3 value, ties to even, saturating at ±448
     * (callers clamp first, as the reference does).
     */
    public static float roundE4m3(float x) {
        float a = Math.abs(x);
        if (!(a < Float.POSITIVE_INFINITY)) {
            return Float.isNaN(x) ? x : Math.copySign(E4M3_MAX, x);
        }
        float r;
        if (a < 0x1p-6f) {
            r = (float) Math.rint(a * 0x1p9f) * 0x1p-9f; // subnormal grid 2^-9
        } else {
            int e = Math.getExponent(a);
            float ulp = Math.scalb(1f, e - 3);
            r = (float) Math.rint(a / ulp) * ulp;
        }
        return Math.copySign(Math.min(r, E4M3_MAX), x);
    }

    /** Encodes a value already on the e4m3 grid (e.g. from {@link #roundE4m3}) to its byte. */
    public static int encodeE4m3(float v) {
        int sign = Float.floatToRawIntBits(v) < 0 ? 0x80 : 0;
        float a = Math.abs(v);
        if (a == 0f) {
            return sign;
        }
        if (a < 0x1p-6f) {
            return sign | Math.round(a * 0x1p9f);
        }
        int e = Math.getExponent(a);
        int man = Math.round((a / Math.scalb(1f, e) - 1f) * 8f);
        return sign | ((e + 7) << 3) | man;
    }

    /** The power-of-two scale {@code 2^ceil(log2(amax / qmax))} the reference uses (ue8m0). */
    public static float pow2ScaleCeil(float amax, float qmax) {
        float r = amax / qmax;
        int bits = Float.floatToRawIntBits(r);
        int e = Math.getExponent(r);
        if (e < Float.MIN_EXPONENT) {
            // subnormal ratio: smallest power of two not below it
            float p = Float.MIN_VALUE;
            while (p < r) {
                p *= 2f;
            }
            return p;
        }
        if ((bits & 0x7fffff) != 0) {
            e++;
        }
        return Math.scalb(1f, e);
    }

    /** ue8m0 byte of a power-of-two scale: {@code log2(s) + 127}. */
    public static int encodeE8m0(float pow2) {
        return Math.getExponent(pow2) + 127;
    }

    /** Value of a ue8m0 byte: {@code 2^(b - 127)}; 0xff is NaN. */
    public static float decodeE8m0(int b) {
        b &= 0xff;
        return b == 0xff ? Float.NaN : Math.scalb(1f, b - 127);
    }

    /**
     * The reference's {@code act_quant(x, block, "ue8m0", inplace=True)} on {@code x[off..off+len)}:
     * per block, amax (clamped to 1e-4) gives a power-of-two scale; values become
     * {@code e4m3(clamp(x/s, ±448)) * s}. Returns nothing; scales can be recomputed by
     * {@link #blockScale}.
     */
    public static void actQuantInPlace(float[] x, int off, int len, int block) {
        for (int b = off; b < off + len; b += block) {
            float s = blockScale(x, b, block);
            for (int i = b; i < b + block; i++) {
                x[i] = quantizeWithScale(x[i], s);
            }
        }
    }

    /** The ue8m0 scale of one block of {@code n} values. */
    public static float blockScale(float[] x, int off, int n) {
        float amax = 0f;
        for (int i = off; i < off + n; i++) {
            amax = Math.max(amax, Math.abs(x[i]));
        }
        return pow2ScaleCeil(Math.max(amax, 1e-4f), E4M3_MAX);
    }

    /** {@code e4m3(clamp(x/s)) * s} for a power-of-two {@code s}. */
    public static float quantizeWithScale(float x, float s) {
        float q = x / s;
        q = Math.max(-E4M3_MAX, Math.min(E4M3_MAX, q));
        return roundE4m3(q) * s;
    }
}
