package io.strata.backend.cpu.ops;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Hand-computed cases for each primitive. */
class OpsTest {

    @Test
    void bf16RoundsToNearestEven() {
        assertThat(Bf16.round(1f + 0x1p-8f)).isEqualTo(1f);               // tie, 1.0 is even
        assertThat(Bf16.round(1f + 3 * 0x1p-8f)).isEqualTo(1f + 0x1p-6f);  // tie, goes up to even
        assertThat(Bf16.round(1f + 0x1p-8f + 0x1p-20f)).isEqualTo(1f + 0x1p-7f);
        assertThat(Bf16.round(-2.5f)).isEqualTo(-2.5f);
        assertThat(Float.isNaN(Bf16.round(Float.NaN))).isTrue();
    }

    @Test
    void e4m3RoundsToNearestEvenIncludingSubnormals() {
        assertThat(Fp8E4m3.round(448f)).isEqualTo(448f);
        assertThat(Fp8E4m3.round(17f)).isEqualTo(16f);      // ulp 2 at [16,32): 8.5 → 8
        assertThat(Fp8E4m3.round(19f)).isEqualTo(20f);      // 9.5 → 10
        assertThat(Fp8E4m3.round(0x1p-10f)).isEqualTo(0f);  // half of the 2^-9 subnormal step, to even 0
        assertThat(Fp8E4m3.round(3 * 0x1p-10f)).isEqualTo(0x1p-8f);
        assertThat(Fp8E4m3.round(-0.3f)).isEqualTo(-0.3125f); // ulp 1/32 at [.25,.5): 9.6 → 10
        for (int b = 0; b < 256; b++) {
            float v = Fp8E4m3.decode((byte) b);
            if (!Float.isNaN(v)) {
                assertThat(Fp8E4m3.round(v)).isEqualTo(v);
                assertThat(Fp8E4m3.decode((byte) Fp8E4m3.encode(v))).isEqualTo(v);
            }
        }
        assertThat(Fp8E4m3.decode((byte) 0x7e)).isEqualTo(448f);
        assertThat(Fp8E4m3.decode((byte) 0x01)).isEqualTo(0x1p-9f);
    }

    @Test
    void ue8m0ScaleIsTheCeilingPowerOfTwo() {
        assertThat(E8m0.ceilPowerOfTwo(448f / 448f)).isEqualTo(1f);           // exact power stays
        assertThat(E8m0.ceilPowerOfTwo(Math.nextUp(448f) / 448f)).isEqualTo(2f);
        assertThat(E8m0.ceilPowerOfTwo(3f / 448f)).isEqualTo(0x1p-7f);        // 3/448 = 2^-7.22
        assertThat(E8m0.encode(0x1p-7f)).isEqualTo((byte) 120);
        assertThat(E8m0.decode((byte) 127)).isEqualTo(1f);
        assertThat(Float.isNaN(E8m0.decode((byte) 0xff))).isTrue();
    }

    @Test
    void actQuantSimulatesE4m3WithBlockScale() {
        float[] x = new float[128];
        x[0] = 3f;       // amax → s = 2^-7
        x[1] = 0.3f;     // 38.4 → 40 → 0.3125
        x[2] = 1f;       // 128 exact
        x[3] = 1e-3f;    // 0.128 → e4m3 subnormal grid 2^-9·rint(65.5)=… 0.126953125 → ·2^-7
        ActivationQuant.fp8RoundTrip(x, 0, 128, 128);
        assertThat(x[0]).isEqualTo(3f);
        assertThat(x[1]).isEqualTo(0.3125f);
        assertThat(x[2]).isEqualTo(1f);
        assertThat(x[3]).isEqualTo(Fp8E4m3.round(0.128f) * 0x1p-7f);
        float[] zeros = new float[64];
        ActivationQuant.fp8RoundTrip(zeros, 0, 64, 64); // amax clamped to 1e-4, no NaN
        assertThat(zeros).containsOnly(0f);
    }

    @Test
    void e2m1TiesGoToEvenCodes() {
        float[][] cases = {{0.25f, 0f}, {0.75f, 1f}, {1.25f, 1f}, {1.75f, 2f}, {2.5f, 2f}, {3.5f, 4f}, {5f, 4f},
            {-5f, -4f}, {5.01f, 6f}, {7f, 6f}, {0.26f, 0.5f}};
        for (float[] c : cases) {
            assertThat(Fp4E2m1.round(c[0])).as("e2m1(%s)", c[0]).isEqualTo(c[1]);
        }
        for (int n = 0; n < 16; n++) {
            assertThat(Fp4E2m1.encode(Fp4E2m1.decode(n)) & 7).isEqualTo(n & 7);
        }
    }

    @Test
    void fp4ActQuantUsesPowerOfTwoScalePer32() {
        float[] x = new float[32];
        x[0] = 12f;   // amax 12 → s = 2
        x[1] = 5f;    // 2.5 → 2 → 4
        x[2] = 1.4f;  // 0.7 → 0.5 → 1
        ActivationQuant.fp4RoundTrip(x, 0, 32, 32);
        assertThat(x[0]).isEqualTo(12f);
        assertThat(x[1]).isEqualTo(4f);
        assertThat(x[2]).isEqualTo(1f);
    }

    @Test
    void sinkhornKeepsADoublyStochasticMatrix() {
        int hc = 2;
        float ln3 = (float) Math.log(3);
        float[] mixes = new float[(2 + hc) * hc];
        float[] base = {0, 0, 0, 0, 0, ln3, ln3, 0};
        float[] scale = {1, 1, 1};
        HyperConnection.Mix m = HyperConnection.Mix.allocate(hc);
        HyperConnection.split(mixes, scale, base, hc, 20, 1e-6f, m);
        assertThat(m.pre()[0]).isCloseTo(0.5f + 1e-6f, within(1e-7f));
        assertThat(m.post()[1]).isCloseTo(1f, within(1e-7f));
        assertThat(m.comb()).containsExactly(new float[]{0.25f, 0.75f, 0.75f, 0.25f}, within(1e-5f));

        int h4 = 4;
        float[] mixes4 = new float[24];
        float[] base4 = new float[24];
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 24; i++) {
            mixes4[i] = (float) r.nextGaussian();
        }
        HyperConnection.Mix m4 = HyperConnection.Mix.allocate(h4);
        HyperConnection.split(mixes4, new float[]{0.5f, 0.5f, 2f}, base4, h4, 20, 1e-6f, m4);
        for (int k = 0; k < h4; k++) {
            float col = 0;
            float row = 0;
            for (int j = 0; j < h4; j++) {
                col += m4.comb()[j * h4 + k];
                row += m4.comb()[k * h4 + j];
            }
            assertThat(col).isCloseTo(1f, within(1e-5f));
            assertThat(row).isCloseTo(1f, within(2e-2f)); // 20 iterations leave rows slightly off
        }
    }

    @Test
    void hcPostMixesWithTransposedComb() {
        int hc = 2;
        int dim = 1;
        HyperConnection.Mix m = new HyperConnection.Mix(new float[]{1, 1}, new float[]{1, 0},
            new float[]{0.25f, 0.75f, 0.75f, 0.25f});
        float[] next = new float[2];
        // residual streams 1 and 2; out 10: next[0] = 10 + .25·1 + .75·2, next[1] = .75·1 + .25·2
        HyperConnection.post(new float[]{10}, 0, new float[]{1, 2}, 0, m, hc, dim, next, 0);
        assertThat(next).containsExactly(11.75f, 1.25f);
    }

    @Test
    void yarnMatchesTheDocumentedRamp() {
        Rope yarn = new Rope(64, 160000, 65536, 16, 32, 1);
        Rope plain = Rope.plain(64, 160000);
        assertThat(yarn.frequency(0)).isEqualTo(1f);
        assertThat(yarn.frequency(15)).isEqualTo(plain.frequency(15));            // below low: unscaled
        assertThat(yarn.frequency(25)).isCloseTo(plain.frequency(25) / 16, within(1e-12f));
        float f20 = plain.frequency(20);
        assertThat(yarn.frequency(20)).isCloseTo(f20 / 16 * 0.5f + f20 * 0.5f, within(1e-9f));
        assertThat(plain.frequency(1)).isCloseTo((float) Math.pow(160000, -2.0 / 64), within(1e-7f));
    }

    @Test
    void ropeRotatesInterleavedPairsAndInverts() {
        Rope rope = Rope.plain(4, 10000);
        float[] cos = new float[2];
        float[] sin = new float[2];
        rope.angles(1, cos, sin);                 // pair 0 angle 1 rad, pair 1 angle 0.01 rad
        float[] x = {1, 0, 1, 0};
        Rope.rotate(x, 0, cos, sin, false);
        assertThat(x[0]).isEqualTo(Bf16.round((float) Math.cos(1)));
        assertThat(x[1]).isEqualTo(Bf16.round((float) Math.sin(1)));
        assertThat(x[3]).isEqualTo(Bf16.round((float) Math.sin(0.01)));
        Rope.rotate(x, 0, cos, sin, true);
        assertThat(x[0]).isCloseTo(1f, within(1e-2f));
        assertThat(x[1]).isCloseTo(0f, within(1e-2f));
    }

    @Test
    void hadamardIsSylvesterOrder() {
        float[] x = {1, 2, 3, 4};
        Hadamard.transform(x, 0, 4, 0.5f);
        // H4 rows: ++++, +-+-, ++--, +--+
        assertThat(x).containsExactly(5f, -1f, -2f, 0f);
    }

    @Test
    void routingPrimitives() {
        assertThat(Moe.sqrtSoftplus(0f)).isCloseTo((float) Math.sqrt(Math.log(2)), within(1e-7f));
        assertThat(Moe.sqrtSoftplus(30f)).isCloseTo((float) Math.sqrt(30), within(1e-6f));
        int[] idx = new int[2];
        Moe.topK(new float[]{1, 3, 2, 3}, new float[]{0, 0, 5, 0}, 4, 2, idx); // bias changes selection only
        assertThat(idx).containsExactly(2, 1);
        float[] w = new float[2];
        Moe.routeWeights(new float[]{1, 3, 2, 3}, idx, 2, 1.5f, w);
        assertThat(w).containsExactly(new float[]{0.6f, 0.9f}, within(1e-6f));
        float[] gate = {20f, 0f};
        float[] up = {-15f, 1f};
        Moe.swiglu(gate, up, 2, 10f, 1f);
        assertThat(gate[0]).isEqualTo(Bf16.round(-10f * 10f / (1f + (float) Math.exp(-10))));
        assertThat(gate[1]).isEqualTo(0f);
    }

    @Test
    void sparseAttentionCountsTheSinkOnlyInTheDenominator() {
        float[] q = {1, 0};
        float[] kv = {1, 0, 0, 1};
        float[] out = new float[2];
        SparseAttention.attend(q, 0, kv, new int[]{0, 1}, 2, 2, 1f, 0f, new float[2], out, 0);
        double e1 = Math.exp(-1);
        double denom = 1 + e1 + e1;
        assertThat(out[0]).isEqualTo(Bf16.round((float) (1 / denom)));
        assertThat(out[1]).isEqualTo(Bf16.round(Bf16.round((float) e1) / (float) denom));
    }
}
