package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.FloatRange;
import org.junit.jupiter.api.Test;

class Fp8E4m3Test {

    /** Independent decode straight from the bit fields. */
    private static double expected(int code) {
        int s = code >>> 7;
        int e = (code >>> 3) & 0xF;
        int m = code & 7;
        double mag = e == 0 ? m / 8.0 * Math.pow(2, -6) : (1 + m / 8.0) * Math.pow(2, e - 7);
        return s == 1 ? -mag : mag;
    }

    @Test
    void decodesAll256Codes() {
        for (int c = 0; c < 256; c++) {
            float v = Fp8E4m3.decode((byte) c);
            if ((c & 0x7F) == 0x7F) {
                assertThat(v).as("code %02x", c).isNaN();
            } else {
                assertThat((double) v).as("code %02x", c).isEqualTo(expected(c));
            }
        }
        assertThat(Fp8E4m3.decode((byte) 0x7E)).isEqualTo(448f);
        assertThat(Fp8E4m3.decode((byte) 0xFE)).isEqualTo(-448f);
        assertThat(Fp8E4m3.decode((byte) 0x01)).isEqualTo(0x1p-9f);
        assertThat(Fp8E4m3.decode((byte) 0x08)).isEqualTo(0x1p-6f);
        assertThat(Fp8E4m3.decode((byte) 0x38)).isEqualTo(1f);
        assertThat(Float.floatToRawIntBits(Fp8E4m3.decode((byte) 0x80))).isEqualTo(0x80000000);
    }

    @Test
    void encodeInvertsDecodeForEveryFiniteCode() {
        for (int c = 0; c < 256; c++) {
            if ((c & 0x7F) != 0x7F) {
                assertThat(Fp8E4m3.encode(Fp8E4m3.decode((byte) c)) & 0xFF).as("code %02x", c).isEqualTo(c);
            }
        }
    }

    @Test
    void midpointsRoundToTheEvenCodeAndNeighboursToTheNearest() {
        for (int sign : new int[] {0, 0x80}) {
            for (int c = 0; c < 0x7E; c++) {
                float lo = Fp8E4m3.decode((byte) (sign | c));
                float hi = Fp8E4m3.decode((byte) (sign | (c + 1)));
                float mid = (lo + hi) / 2; // exact: both have few mantissa bits
                int even = (c & 1) == 0 ? c : c + 1;
                assertThat(Fp8E4m3.encode(mid) & 0xFF).as("tie %s", mid).isEqualTo(sign | even);
                float towardHi = sign == 0 ? Math.nextUp(mid) : Math.nextDown(mid);
                float towardLo = sign == 0 ? Math.nextDown(mid) : Math.nextUp(mid);
                assertThat(Fp8E4m3.encode(towardHi) & 0xFF).isEqualTo(sign | (c + 1));
                assertThat(Fp8E4m3.encode(towardLo) & 0xFF).isEqualTo(sign | c);
            }
        }
    }

    @Test
    void saturatesInsteadOfOverflowing() {
        assertThat(Fp8E4m3.encode(448f)).isEqualTo((byte) 0x7E);
        assertThat(Fp8E4m3.encode(463.9f)).isEqualTo((byte) 0x7E);
        assertThat(Fp8E4m3.encode(464f)).isEqualTo((byte) 0x7E);
        assertThat(Fp8E4m3.encode(1e30f)).isEqualTo((byte) 0x7E);
        assertThat(Fp8E4m3.encode(Float.POSITIVE_INFINITY)).isEqualTo((byte) 0x7E);
        assertThat(Fp8E4m3.encode(Float.NEGATIVE_INFINITY)).isEqualTo((byte) 0xFE);
        assertThat(Fp8E4m3.encode(-500f)).isEqualTo((byte) 0xFE);
        assertThat(Fp8E4m3.encode(Float.NaN)).isEqualTo(Fp8E4m3.NAN);
        assertThat(Fp8E4m3.encode(-0f)).isEqualTo((byte) 0x80);
        assertThat(Fp8E4m3.encode(0x1p-10f)).isEqualTo((byte) 0); // tie with 2^-9 → even (0)
        assertThat(Fp8E4m3.encode(0x1p-20f)).isEqualTo((byte) 0);
        assertThat(Fp8E4m3.encode(38.4f)).isEqualTo(Fp8E4m3.encode(40f));
    }

    @Property(tries = 3000)
    void encodeIsTheNearestCodeTiesToEven(@ForAll @FloatRange(min = -600f, max = 600f) float x) {
        assertThat(Fp8E4m3.encode(x) & 0xFF).isEqualTo(bruteForce(x));
    }

    @Property(tries = 2000)
    void encodeIsTheNearestCodeForSmallValues(@ForAll @FloatRange(min = -0.05f, max = 0.05f) float x) {
        assertThat(Fp8E4m3.encode(x) & 0xFF).isEqualTo(bruteForce(x));
    }

    private static int bruteForce(float x) {
        int sign = Float.floatToRawIntBits(x) < 0 ? 0x80 : 0;
        double a = Math.min(Math.abs((double) x), 448.0);
        int best = 0;
        double bestErr = Double.MAX_VALUE;
        for (int c = 0; c <= 0x7E; c++) {
            double err = Math.abs(expected(c) - a);
            if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
                best = c;
                bestErr = err;
            }
        }
        return sign | best;
    }
}
