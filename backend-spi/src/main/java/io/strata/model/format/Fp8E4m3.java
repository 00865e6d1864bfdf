package io.strata.model.format;

/**
 * FP8 e4m3 in its "fn" variant ({@code torch.float8_e4m3fn}): 1 sign, 4 exponent (bias 7), 3 mantissa bits,
 * no infinities, NaN only at {@code 0x7F}/{@code 0xFF}, largest finite ±448, smallest subnormal 2^-9.
 */
public final class Fp8E4m3 {

    public static final float MAX = 448f;
    public static final byte NAN = 0x7F;
    private static final float[] DECODE = new float[256];

    static {
        for (int code = 0; code < 256; code++) {
            DECODE[code] = computeDecode(code);
        }
    }

    private Fp8E4m3() {
    }

    private static float computeDecode(int code) {
        int sign = (code & 0x80) != 0 ? -1 : 1;
        int exponent = (code >>> 3) & 0xF;
        int mantissa = code & 0x7;
        if (exponent == 0xF && mantissa == 0x7) {
            return Float.NaN;
        }
        float magnitude = exponent == 0
                ? mantissa * 0x1p-9f
                : (1f + mantissa / 8f) * Math.scalb(1f, exponent - 7);
        return sign * magnitude;
    }

    public static float decode(byte code) {
        return DECODE[code & 0xFF];
    }

    /** A copy of the 256-entry decode table (index = unsigned code). */
    public static float[] decodeTable() {
        return DECODE.clone();
    }

    /**
     * float32 → e4m3 with round-to-nearest-even and saturation to ±448 (the CUDA {@code satfinite} cast; the
     * reference clamps to ±448 before every cast, so saturation and torch's overflow-to-NaN never differ
     * on its inputs). ±∞ saturates; NaN gives {@link #NAN}; -0 gives {@code 0x80}.
     */
    public static byte encode(float value) {
        int bits = Float.floatToRawIntBits(value);
        int sign = (bits >>> 24) & 0x80;
        int abs = bits & 0x7FFFFFFF;
        if (abs > 0x7F800000) {
            return NAN;
        }
        if (abs >= 0x43E00000) { // ≥ 448 (and ∞): saturate
            return (byte) (sign | 0x7E);
        }
        if (abs >= 0x3C800000) { // ≥ 2^-6: normal in e4m3
            // Round the 23-bit mantissa to 3 bits, nearest-even; a carry moves into the exponent by itself.
            int rounded = (abs + 0x7FFFF + ((abs >>> 20) & 1)) >>> 20;
            return (byte) (sign | Math.min(rounded - (120 << 3), 0x7E));
        }
        // Subnormal grid of step 2^-9 (exact scaling); a count of 8 is exactly the smallest normal, code 0x08.
        return (byte) (sign | (int) Math.rint(Float.intBitsToFloat(abs) * 512f));
    }

    /** {@code value} rounded through e4m3 and back (saturating). */
    public static float round(float value) {
        return decode(encode(value));
    }
}
