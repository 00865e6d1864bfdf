package io.strata.model.format;

/** bfloat16: the upper 16 bits of an IEEE float32. Conversions from float round to nearest, ties to even. */
public final class Bf16 {

    private Bf16() {
    }

    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /** Round-to-nearest-even float32 → bf16; NaN stays NaN (quietened), infinities stay infinite. */
    public static short fromFloat(float value) {
        int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((bits >>> 16) | 0x0040);
        }
        int lsb = (bits >>> 16) & 1;
        return (short) ((bits + 0x7FFF + lsb) >>> 16);
    }

    /** {@code value} rounded to the nearest bf16, as a float: what {@code x.to(torch.bfloat16).float()} gives. */
    public static float round(float value) {
        return toFloat(fromFloat(value));
    }

    /** Rounds every element of {@code values[off, off+len)} to bf16 in place. */
    public static void roundInPlace(float[] values, int off, int len) {
        for (int i = off; i < off + len; i++) {
            values[i] = round(values[i]);
        }
    }
}
