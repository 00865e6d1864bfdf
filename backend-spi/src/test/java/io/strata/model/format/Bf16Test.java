package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class Bf16Test {

    @Test
    void everyBf16CodeRoundTrips() {
        for (int c = 0; c < 65536; c++) {
            float v = Bf16.toFloat((short) c);
            if (Float.isNaN(v)) {
                assertThat(Bf16.toFloat(Bf16.fromFloat(v))).isNaN();
            } else {
                assertThat(Bf16.fromFloat(v) & 0xFFFF).as("code %04x", c).isEqualTo(c);
            }
        }
    }

    @Test
    void midpointsRoundToEven() {
        for (int c = 0; c < 0x7F7F; c += 7) {
            int lo = c << 16;
            int mid = lo | 0x8000;
            int even = (c & 1) == 0 ? c : c + 1;
            assertThat(Bf16.fromFloat(Float.intBitsToFloat(mid)) & 0xFFFF).isEqualTo(even);
            assertThat(Bf16.fromFloat(Float.intBitsToFloat(mid + 1)) & 0xFFFF).isEqualTo(c + 1);
            assertThat(Bf16.fromFloat(Float.intBitsToFloat(mid - 1)) & 0xFFFF).isEqualTo(c);
        }
        assertThat(Bf16.round(Float.MAX_VALUE)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(Bf16.round(Float.NEGATIVE_INFINITY)).isEqualTo(Float.NEGATIVE_INFINITY);
    }

    @Property(tries = 5000)
    void roundingIsNearestTiesToEven(@ForAll float x) {
        if (Float.isNaN(x) || Float.isInfinite(x)) {
            return;
        }
        int bits = Float.floatToRawIntBits(x);
        float lo = Float.intBitsToFloat(bits & 0xFFFF0000);
        float hi = Float.intBitsToFloat((bits & 0xFFFF0000) + 0x10000);
        // past the largest bf16 the next grid point is ±2^128, which rounds to infinity
        double hiValue = Float.isInfinite(hi) ? Math.copySign(0x1p128, x) : hi;
        double dLo = Math.abs((double) x - lo);
        double dHi = Math.abs(hiValue - x);
        float expected = dLo < dHi ? lo : dHi < dLo ? hi : (((bits >>> 16) & 1) == 0 ? lo : hi);
        assertThat(Bf16.round(x)).isEqualTo(expected);
    }
}
