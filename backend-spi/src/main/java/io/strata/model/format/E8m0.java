package io.strata.model.format;

/**
 * UE8M0 scale bytes ({@code torch.float8_e8m0fnu}): an unsigned biased exponent, value 2^(b−127); 0xFF is NaN.
 * Every FP8 block scale and FP4 group scale of V4 is one of these.
 */
public final class E8m0 {

    public static final byte NAN = (byte) 0xFF;
    private static final float[] DECODE = new float[256];

    static {
        for (int b = 0; b < 255; b++) {
            DECODE[b] = Math.scalb(1f, b - 127);
        }
        DECODE[255] = Float.NaN;
    }

    private E8m0() {
    }

    public static float decode(byte code) {
        return DECODE[code & 0xFF];
    }

    /** The code of 2^exponent, for exponent in [-127, 127]. */
    public static byte fromExponent(int exponent) {
        if (exponent < -127 || exponent > 127) {
            throw new IllegalArgumentException("e8m0 exponent out of range [-127, 127]: " + exponent);
        }
        return (byte) (exponent + 127);
    }

    /** The code of a power-of-two scale; rejects anything that is not an exact power of two in range. */
    public static byte encode(float powerOfTwo) {
        if (Float.isNaN(powerOfTwo)) {
            return NAN;
        }
        if (!(powerOfTwo > 0) || Float.isInfinite(powerOfTwo)) {
            throw new IllegalArgumentException("e8m0 scale must be a positive power of two, got " + powerOfTwo);
        }
        int exponent = Math.getExponent(powerOfTwo);
        if (exponent == Float.MIN_EXPONENT - 1) {
            // subnormal float: only 2^-127 is representable in e8m0
            if (powerOfTwo != 0x1p-127f) {
                throw new IllegalArgumentException("e8m0 scale must be >= 2^-127 and a power of two, got " + powerOfTwo);
            }
            return 0;
        }
        if (Math.scalb(1f, exponent) != powerOfTwo) {
            throw new IllegalArgumentException("e8m0 scale must be a power of two, got " + powerOfTwo);
        }
        return fromExponent(exponent);
    }

    /**
     * The smallest power of two ≥ {@code value} (for positive normal floats), computed from the bits as the
     * reference kernel does: exponent + 1 unless the mantissa is zero.
     */
    public static float ceilPowerOfTwo(float value) {
        int bits = Float.floatToRawIntBits(value);
        int exponent = ((bits >>> 23) & 0xFF) - 127 + ((bits & 0x7FFFFF) != 0 ? 1 : 0);
        return Math.scalb(1f, exponent);
    }
}
