package io.strata.model.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.FloatRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class ActivationQuantTest {

    /** The kernel multiplies by float(1/max), the fallback divides: same power of two near every boundary. */
    @Test
    void multiplyAndDivideGiveTheSameScaleAroundEveryPowerOfTwo() {
        for (float max : new float[] {Fp8E4m3.MAX, Fp4E2m1.MAX}) {
            float inverse = 1f / max;
            for (int k = -40; k <= 40; k++) {
                int center = Float.floatToRawIntBits((float) (max * Math.pow(2, k)));
                for (int d = -3000; d <= 3000; d++) {
                    float amax = Float.intBitsToFloat(center + d);
                    assertThat(E8m0.ceilPowerOfTwo(amax * inverse)).isEqualTo(E8m0.ceilPowerOfTwo(amax / max));
                }
            }
        }
    }

    @Test
    void fp8ScalesArePowersOfTwoCoveringTheBlockMax() {
        assertThat(ActivationQuant.fp8Scale(448f)).isEqualTo(1f);
        assertThat(ActivationQuant.fp8Scale(Math.nextUp(448f))).isEqualTo(2f);
        assertThat(ActivationQuant.fp8Scale(3f)).isEqualTo(0x1p-7f);
        assertThat(ActivationQuant.fp8Scale(0f)).isEqualTo(0x1p-22f); // floor 1e-4
        assertThat(ActivationQuant.fp4Scale(6f)).isEqualTo(1f);
        assertThat(ActivationQuant.fp4Scale(6.5f)).isEqualTo(2f);
        assertThat(ActivationQuant.fp4Scale(0f)).isEqualTo(0x1p-126f);
    }

    @Test
    void fp8RoundTripOfAKnownBlock() {
        float[] x = new float[128];
        x[0] = 3f;
        x[1] = 1f;
        x[2] = 0.3f;
        x[3] = -0.0001f;
        ActivationQuant.fp8RoundTrip(x, 0, 128, 128);
        // s = 2^-7: 3/s = 384 (exact), 1/s = 128, 0.3/s = 38.4 → 40, 0.0001/s = 0.0128 → 0.013671875 (7·2^-9)
        assertThat(x[0]).isEqualTo(3f);
        assertThat(x[1]).isEqualTo(1f);
        assertThat(x[2]).isEqualTo(40f * 0x1p-7f);
        assertThat(x[3]).isEqualTo(-7f * 0x1p-9f * 0x1p-7f);
    }

    @Test
    void fp4RoundTripFollowsTheTiesOfTheSpec() {
        float[] x = {6f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, -5f};
        ActivationQuant.fp4RoundTrip(x, 0, 8, 8);
        assertThat(x).containsExactly(6f, 0f, 1f, 1f, 2f, 2f, 4f, -4f);
    }

    @Test
    void blocksAreIndependent() {
        float[] x = new float[256];
        x[0] = 448f;
        x[5] = 0.013f;
        x[128] = 0.013f;
        ActivationQuant.fp8RoundTrip(x, 0, 256, 128);
        // block 0: s = 1, 0.013 is subnormal in e4m3: 6.656·2^-9 → 7·2^-9
        assertThat(x[5]).isEqualTo(7f * 0x1p-9f);
        // block 1: its own max, s = 2^-15: 425.98 → 416
        assertThat(x[128]).isEqualTo(416f * 0x1p-15f);
    }

    @Test
    void lengthMustBeWholeBlocks() {
        assertThatThrownBy(() -> ActivationQuant.fp8RoundTrip(new float[100], 0, 100, 64))
                .hasMessageContaining("multiple of block size 64");
    }

    /** The property that makes the FP8 KV format lossless relative to the reference: quantizing twice = once. */
    @Property(tries = 300)
    void fp8RoundTripIsIdempotentAndBf16Exact(@ForAll @Size(448) float[] raw) {
        float[] x = bf16(raw);
        ActivationQuant.fp8RoundTrip(x, 0, 448, ActivationQuant.KV_BLOCK);
        float[] again = x.clone();
        ActivationQuant.fp8RoundTrip(again, 0, 448, ActivationQuant.KV_BLOCK);
        assertThat(again).containsExactly(x);
        for (float v : x) {
            assertThat(Bf16.round(v)).isEqualTo(v);
        }
    }

    @Property(tries = 300)
    void fp4RoundTripIsIdempotent(@ForAll @Size(128) float[] raw) {
        float[] x = bf16(raw);
        ActivationQuant.fp4RoundTrip(x, 0, 128, ActivationQuant.FP4_BLOCK);
        float[] again = x.clone();
        ActivationQuant.fp4RoundTrip(again, 0, 128, ActivationQuant.FP4_BLOCK);
        assertThat(again).containsExactly(x);
    }

    @Property(tries = 200)
    void quantizedCodesTimesScalesEqualTheRoundTrip(@ForAll("gaussianBlocks") float[] x) {
        float[] simulated = x.clone();
        ActivationQuant.fp8RoundTrip(simulated, 0, 256, 128);
        byte[] codes = new byte[256];
        float[] scales = new float[2];
        ActivationQuant.fp8Quantize(x, 0, 256, 128, codes, 0, scales, 0);
        for (int i = 0; i < 256; i++) {
            assertThat(Fp8E4m3.decode(codes[i]) * scales[i / 128]).isEqualTo(simulated[i]);
        }

        float[] fp4 = x.clone();
        ActivationQuant.fp4RoundTrip(fp4, 0, 128, 32);
        byte[] packed = new byte[64];
        byte[] scaleCodes = new byte[4];
        ActivationQuant.fp4Quantize(x, 0, 128, 32, packed, 0, scaleCodes, 0);
        for (int i = 0; i < 128; i++) {
            float q = (i & 1) == 0 ? Fp4E2m1.low(packed[i / 2]) : Fp4E2m1.high(packed[i / 2]);
            assertThat(q * E8m0.decode(scaleCodes[i / 32])).isEqualTo(fp4[i]);
        }
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<float[]> gaussianBlocks() {
        return net.jqwik.api.Arbitraries.longs().map(seed -> {
            Random r = new Random(seed);
            float[] x = new float[256];
            float scale = (float) Math.pow(10, r.nextInt(9) - 5);
            for (int i = 0; i < x.length; i++) {
                x[i] = Bf16.round((float) r.nextGaussian() * scale);
            }
            return x;
        });
    }

    @Property(tries = 500)
    void fp8ErrorIsWithinHalfAStep(@ForAll @FloatRange(min = -1000f, max = 1000f) float v) {
        float[] x = new float[128];
        x[0] = 1000f;
        x[1] = v;
        ActivationQuant.fp8RoundTrip(x, 0, 128, 128);
        float s = ActivationQuant.fp8Scale(1000f);
        // e4m3 has 3 mantissa bits: relative error ≤ 2^-4 for normals, absolute ≤ 2^-10·s for subnormals
        assertThat((double) Math.abs(x[1] - v)).isLessThanOrEqualTo(Math.max(Math.abs(v) / 16.0, 0x1p-10 * s));
    }

    private static float[] bf16(float[] raw) {
        float[] x = new float[raw.length];
        for (int i = 0; i < raw.length; i++) {
            float v = Float.isFinite(raw[i]) ? raw[i] : 0f;
            x[i] = Bf16.round(Math.clamp(v, -1e30f, 1e30f));
        }
        return x;
    }
}
