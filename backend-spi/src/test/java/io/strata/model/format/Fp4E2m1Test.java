package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.FloatRange;
import org.junit.jupiter.api.Test;

class Fp4E2m1Test {

    private static final float[] MAGNITUDES = {0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f};

    @Test
    void decodesAll16Codes() {
        for (int c = 0; c < 16; c++) {
            float expected = (c & 8) != 0 ? -MAGNITUDES[c & 7] : MAGNITUDES[c & 7];
            assertThat(Fp4E2m1.decode(c)).as("code %d", c).isEqualTo(expected);
            assertThat(Fp4E2m1.encode(Fp4E2m1.decode(c))).isEqualTo(c);
        }
        assertThat(Float.floatToRawIntBits(Fp4E2m1.decode(8))).isEqualTo(0x80000000);
    }

    @Test
    void tiesGoToTheEvenCodeAsTheSpecLists() {
        float[][] ties = {{0.25f, 0f}, {0.75f, 1f}, {1.25f, 1f}, {1.75f, 2f}, {2.5f, 2f}, {3.5f, 4f}, {5f, 4f}};
        for (float[] t : ties) {
            assertThat(Fp4E2m1.round(t[0])).as("%s", t[0]).isEqualTo(t[1]);
            assertThat(Fp4E2m1.round(-t[0])).as("-%s", t[0]).isEqualTo(-t[1]);
        }
    }

    @Test
    void neighboursOfMidpointsGoToTheNearest() {
        for (int c = 0; c < 7; c++) {
            float mid = (MAGNITUDES[c] + MAGNITUDES[c + 1]) / 2;
            assertThat(Fp4E2m1.encode(Math.nextUp(mid))).isEqualTo(c + 1);
            assertThat(Fp4E2m1.encode(Math.nextDown(mid))).isEqualTo(c);
            assertThat(Fp4E2m1.encode(-Math.nextUp(mid))).isEqualTo(8 | (c + 1));
        }
    }

    @Test
    void saturatesAtSix() {
        assertThat(Fp4E2m1.round(6.5f)).isEqualTo(6f);
        assertThat(Fp4E2m1.round(1e9f)).isEqualTo(6f);
        assertThat(Fp4E2m1.round(Float.NEGATIVE_INFINITY)).isEqualTo(-6f);
        assertThat(Fp4E2m1.encode(Float.NaN)).isEqualTo(7);
    }

    @Test
    void packsLowNibbleFirstForAll256Bytes() {
        byte[] all = new byte[256];
        for (int b = 0; b < 256; b++) {
            all[b] = (byte) b;
        }
        float[] out = new float[512];
        Fp4E2m1.unpack(all, 0, 256, out, 0);
        for (int b = 0; b < 256; b++) {
            assertThat(out[2 * b]).isEqualTo(Fp4E2m1.decode(b & 0xF));
            assertThat(out[2 * b + 1]).isEqualTo(Fp4E2m1.decode(b >>> 4));
            assertThat(Fp4E2m1.low((byte) b)).isEqualTo(out[2 * b]);
            assertThat(Fp4E2m1.high((byte) b)).isEqualTo(out[2 * b + 1]);
            assertThat(Fp4E2m1.pack(b & 0xF, b >>> 4)).isEqualTo((byte) b);
        }
    }

    @Property(tries = 3000)
    void encodeIsTheNearestCodeTiesToEven(@ForAll @FloatRange(min = -8f, max = 8f) float x) {
        double a = Math.min(Math.abs((double) x), 6.0);
        int best = 0;
        double bestErr = Double.MAX_VALUE;
        for (int c = 0; c < 8; c++) {
            double err = Math.abs(MAGNITUDES[c] - a);
            if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
                best = c;
                bestErr = err;
            }
        }
        int sign = Float.floatToRawIntBits(x) < 0 ? 8 : 0;
        assertThat(Fp4E2m1.encode(x)).isEqualTo(sign | best);
    }

    @Test
    void roundIsDecodeOfEncodeBitForBit() {
        // round() is a separate fast path; it must agree with the code path on every float (a stride that
        // touches every exponent and sign, plus the neighbours of every midpoint and the specials).
        for (long bits = 0; bits <= 0xFFFFFFFFL; bits += 251) {
            assertSameAsCodePath(Float.intBitsToFloat((int) bits));
        }
        for (int c = 0; c < 7; c++) {
            float mid = (MAGNITUDES[c] + MAGNITUDES[c + 1]) / 2;
            for (float v : new float[] {mid, Math.nextUp(mid), Math.nextDown(mid)}) {
                assertSameAsCodePath(v);
                assertSameAsCodePath(-v);
            }
        }
        for (float v : new float[] {0f, -0f, 6f, -6f, Math.nextUp(6f), Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY, Float.NaN, Float.MIN_VALUE, -Float.MIN_VALUE}) {
            assertSameAsCodePath(v);
        }
    }

    private static void assertSameAsCodePath(float v) {
        float expected = Fp4E2m1.decode(Fp4E2m1.encode(v));
        if (Float.floatToRawIntBits(Fp4E2m1.round(v)) != Float.floatToRawIntBits(expected)) {
            assertThat(Fp4E2m1.round(v)).as("round(%s) bits", v).isEqualTo(expected);
            assertThat(Float.floatToRawIntBits(Fp4E2m1.round(v))).as("round(%s) sign", v)
                    .isEqualTo(Float.floatToRawIntBits(expected));
        }
    }
}
