package io.strata.model.format;

/**
 * FP4 e2m1 (MXFP4 element): 1 sign bit (bit 3), magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}. Two values share a
 * byte: element 2i in the LOW nibble, element 2i+1 in the high nibble.
 */
public final class Fp4E2m1 {

    public static final float MAX = 6f;
    private static final float[] DECODE = {
        0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f,
        -0f, -0.5f, -1f, -1.5f, -2f, -3f, -4f, -6f,
    };
    /** Decoded (low, high) pair of every byte, for bulk unpacking: index 2b and 2b+1. */
    private static final float[] PAIRS = new float[512];

    static {
        for (int b = 0; b < 256; b++) {
            PAIRS[2 * b] = DECODE[b & 0xF];
            PAIRS[2 * b + 1] = DECODE[b >>> 4];
        }
    }

    private Fp4E2m1() {
    }

    /** Value of a 4-bit code (only the low 4 bits of {@code code} are used). */
    public static float decode(int code) {
        return DECODE[code & 0xF];
    }

    public static float low(byte packed) {
        return DECODE[packed & 0xF];
    }

    public static float high(byte packed) {
        return DECODE[(packed >>> 4) & 0xF];
    }

    /** A copy of the 16-entry table. */
    public static float[] decodeTable() {
        return DECODE.clone();
    }

    /**
     * Round to nearest e2m1 code, ties to the even code (0.25→0, 0.75→1, 1.25→1, 1.75→2, 2.5→2, 3.5→4, 5→4),
     * saturating at ±6. NaN has no e2m1 code; it maps to +6 (documented choice, never produced by the
     * reference's inputs, which are clamped first).
     */
    public static int encode(float value) {
        if (Float.isNaN(value)) {
            return 0x7;
        }
        int sign = Float.floatToRawIntBits(value) < 0 ? 0x8 : 0;
        float a = Math.abs(value);
        int code;
        if (a <= 0.25f) {
            code = 0;
        } else if (a < 0.75f) {
            code = 1;
        } else if (a <= 1.25f) {
            code = 2;
        } else if (a < 1.75f) {
            code = 3;
        } else if (a <= 2.5f) {
            code = 4;
        } else if (a < 3.5f) {
            code = 5;
        } else if (a <= 5f) {
            code = 6;
        } else {
            code = 7;
        }
        return sign | code;
    }

    /**
     * {@code decode(encode(value))} without the code: round half to even on the grid's step (0.5 below 2, 1 below
     * 4, 2 above), which lands ties on even codes exactly as {@link #encode} does. This is the activation
     * simulation's inner loop, where the compare cascade of {@link #encode} mispredicts on Gaussian data.
     */
    public static float round(float value) {
        if (Float.isNaN(value)) {
            return MAX;
        }
        float a = Math.abs(value);
        float r;
        if (a < 2f) {
            r = (float) Math.rint(a * 2f) * 0.5f;
        } else if (a < 4f) {
            r = (float) Math.rint(a);
        } else {
            r = Math.min((float) Math.rint(a * 0.5f) * 2f, MAX);
        }
        return Math.copySign(r, value);
    }

    public static byte pack(int lowCode, int highCode) {
        return (byte) ((lowCode & 0xF) | ((highCode & 0xF) << 4));
    }

    /** Unpacks {@code bytes} packed bytes into {@code 2*bytes} floats, low nibble first. */
    public static void unpack(byte[] src, int srcOff, int bytes, float[] dst, int dstOff) {
        for (int i = 0; i < bytes; i++) {
            int b = src[srcOff + i] & 0xFF;
            dst[dstOff + 2 * i] = PAIRS[2 * b];
            dst[dstOff + 2 * i + 1] = PAIRS[2 * b + 1];
        }
    }

    static float pairLow(int unsignedByte) {
        return PAIRS[2 * unsignedByte];
    }

    static float pairHigh(int unsignedByte) {
        return PAIRS[2 * unsignedByte + 1];
    }
}
