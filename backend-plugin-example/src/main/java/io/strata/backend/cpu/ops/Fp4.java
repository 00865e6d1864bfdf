package io.strata.backend.cpu.ops;

/**
 * FP4 e2m1 (values ±{0, .5, 1, 1.5, 2, 3, 4, 6}) with ue8m0 scales per 32 values: the routed-expert
 * weight format and the indexer's activation simulation.
 */
public final class Fp4 {
    public static final float E2M1_MAX = 6f;
    private static final float[] CODES = {0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f,
        -0f, -0.5f, -1f, -1.5f, -2f, -3f, -4f, -6f};
    /** Smallest amax the reference lets a block have: {@code 6 * 2^-126}. */
    private static final float MIN_AMAX = 6f * 0x1p-126f;

    private Fp4() {
    }

    /** The value of a 4-bit code (bit 3 = sign). */
    public static float decode(int nibble) {
        return CODES[nibble & 0xf];
    }

    /** A copy of the 16-entry code table. */
    public static float[] decodeTable() {
        return CODES.clone();
    }

    /** Rounds to the nearest e2m1 value with ties to even code (0.25→0, 0.75→1, 2.5→2, 5→4), saturating at 6. */
    public static float roundE2m1(float x) {
        float a = Math.abs(x);
        float r;
        if (!(a <= E2M1_MAX)) {
            r = Float.isNaN(a) ? a : E2M1_MAX;
        } else if (a < 2f) {
            r = (float) Math.rint(a * 2f) * 0.5f;
        } else if (a < 4f) {
            r = (float) Math.rint(a);
        } else {
            r = (float) Math.rint(a * 0.5f) * 2f;
        }
        return Math.copySign(r, x);
    }

    /** The 4-bit code of a value on the e2m1 grid. */
    public static int encode(float v) {
        int sign = Float.floatToRawIntBits(v) < 0 ? 8 : 0;
        float a = Math.abs(v);
        for (int c = 0; c < 8; c++) {
            if (CODES[c] == a) {
                return sign | c;
            }
        }
        throw new IllegalArgumentException("not an e2m1 value: " + v);
    }

    /** The power-of-two scale of one block, amax clamped to {@code 6·2^-126}. */
    public static float blockScale(float[] x, int off, int n) {
        float amax = 0f;
        for (int i = off; i < off + n; i++) {
            amax = Math.max(amax, Math.abs(x[i]));
        }
        return Fp8.pow2ScaleCeil(Math.max(amax, MIN_AMAX), E2M1_MAX);
    }

    /** The reference's in-place {@code fp4_act_quant(x, block)}: {@code e2m1(clamp(x/s, ±6)) * s} per block. */
    public static void actQuantInPlace(float[] x, int off, int len, int block) {
        for (int b = off; b < off + len; b += block) {
            float s = blockScale(x, b, block);
            for (int i = b; i < b + block; i++) {
                float q = Math.max(-E2M1_MAX, Math.min(E2M1_MAX, x[i] / s));
                x[i] = roundE2m1(q) * s;
            }
        }
    }
}
