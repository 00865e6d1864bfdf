package io.strata.backend.cpu.ops;

/**
 * bfloat16 as the reference stores activations: the top 16 bits of an fp32, rounded to nearest even.
 * Values stay in Java {@code float}s; {@link #round} is applied exactly where the reference casts to bf16.
 */
public final class Bf16 {
    private Bf16() {
    }

    /** Rounds an fp32 value to the nearest bf16 value (ties to even); NaN stays NaN. */
    public static float round(float x) {
        return Float.intBitsToFloat(roundBits(x) << 16);
    }

    /** The bf16 bit pattern (low 16 bits of the result) nearest to {@code x}. */
    public static int roundBits(float x) {
        int bits = Float.floatToRawIntBits(x);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (bits >>> 16) | 0x40; // quiet NaN
        }
        bits += 0x7fff + ((bits >>> 16) & 1);
        return bits >>> 16;
    }

    /** The fp32 value of a bf16 bit pattern. */
    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** Rounds {@code x[off..off+len)} to bf16 in place. */
    public static void roundInPlace(float[] x, int off, int len) {
        for (int i = off; i < off + len; i++) {
            x[i] = round(x[i]);
        }
    }
}
