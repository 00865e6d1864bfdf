package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class E8m0Test {

    @Test
    void decodesAll256Codes() {
        for (int b = 0; b < 255; b++) {
            assertThat(E8m0.decode((byte) b)).as("code %d", b).isEqualTo((float) Math.pow(2, b - 127));
            assertThat(E8m0.encode(E8m0.decode((byte) b)) & 0xFF).isEqualTo(b);
        }
        assertThat(E8m0.decode((byte) 0xFF)).isNaN();
        assertThat(E8m0.decode((byte) 127)).isEqualTo(1f);
        assertThat(E8m0.decode((byte) 0)).isEqualTo(0x1p-127f);
        assertThat(E8m0.decode((byte) 254)).isEqualTo(0x1p127f);
        assertThat(E8m0.encode(Float.NaN)).isEqualTo(E8m0.NAN);
    }

    @Test
    void encodeRejectsWhatIsNotAPowerOfTwo() {
        assertThatThrownBy(() -> E8m0.encode(3f)).hasMessageContaining("power of two");
        assertThatThrownBy(() -> E8m0.encode(0f)).hasMessageContaining("power of two");
        assertThatThrownBy(() -> E8m0.encode(-2f)).hasMessageContaining("power of two");
        assertThatThrownBy(() -> E8m0.fromExponent(128)).hasMessageContaining("range");
    }

    @Test
    void ceilPowerOfTwoRoundsUpFromTheBits() {
        assertThat(E8m0.ceilPowerOfTwo(1f)).isEqualTo(1f);
        assertThat(E8m0.ceilPowerOfTwo(Math.nextUp(1f))).isEqualTo(2f);
        assertThat(E8m0.ceilPowerOfTwo(0.75f)).isEqualTo(1f);
        assertThat(E8m0.ceilPowerOfTwo(3f / 448f)).isEqualTo(0x1p-7f);
        assertThat(E8m0.ceilPowerOfTwo(1e-4f / 448f)).isEqualTo(0x1p-22f);
    }
}
