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
        if (Float.isNaN(value)) {
            return NAN;
        }
        int sign = Float.floatToRawIntBits(value) < 0 ? 0x80 : 0;
        float a = Math.abs(value);
        int magnitude;
        if (a >= MAX) {
            magnitude = 0x7E;
        } else if (a < 0x1p-6f) {
            // Subnormal grid of step 2^-9; a count of 8 is exactly the smallest normal (code 0x08).
            magnitude = (int) Math.rint(a * 0x1p9);
        } else {
            int e = Math.getExponent(a);
            double steps = Math.rint((a / Math.scalb(1.0, e) - 1.0) * 8.0);
            magnitude = ((e + 7) << 3) + (int) steps; // steps == 8 carries into the exponent
            if (magnitude > 0x7E) {
                magnitude = 0x7E;
            }
        }
        return (byte) (sign | magnitude);
    }

    /** {@code value} rounded through e4m3 and back (saturating). */
    public static float round(float value) {
        return decode(encode(value));
    }
}
