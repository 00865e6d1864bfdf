package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Random;

import static io.strata.backend.cuda.GpuTest.assumeGpu;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fused hyper-connection step ({@code strata_hc_post_pre}: the post computed inside the next pre's mix
 * kernel) against the two steps it replaces ({@code strata_hc_post}, then {@code strata_hc_pre}): the streams,
 * the normalised sub-layer input and the mixes must be bit for bit the same, at token counts on both sides of
 * the mixes' several-tokens-per-CTA threshold and with a last CTA of fewer tokens.
 */
class HyperConnectionKernelsTest {
    private static final int HC = 4;
    private static final int MIX = (2 + HC) * HC;
    private static final int MW = 2 * HC + HC * HC;

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @ParameterizedTest
    @CsvSource({"1, 4096", "3, 4096", "64, 4096", "67, 4096", "5, 256"})
    void fusedPostAndPreEqualTheTwoSteps(int tokens, int dim) {
        Random rnd = new Random(tokens * 31L + dim);
        int width = HC * dim;
        short[] y = bf16(rnd, tokens * dim, 1f);
        short[] res = bf16(rnd, tokens * width, 1f);
        float[] mix0 = new float[tokens * MW];
        for (int i = 0; i < mix0.length; i++) {
            mix0[i] = (float) rnd.nextGaussian() * 0.5f + 0.5f;
        }
        float[] fn = new float[MIX * width];
        for (int i = 0; i < fn.length; i++) {
            fn[i] = (float) rnd.nextGaussian() * 0.01f;
        }
        float[] base = new float[MIX];
        for (int i = 0; i < MIX; i++) {
            base[i] = (float) rnd.nextGaussian() * 0.1f;
        }
        float[] scale = {0.7f, 1.1f, 0.9f};
        float[] norm = new float[dim];
        for (int i = 0; i < dim; i++) {
            norm[i] = 0.5f + rnd.nextFloat();
        }
        long partialBytes = Math.max(4, CudaNative.strata_hc_partials_bytes(tokens, HC, dim));
        try (DeviceBuffer dy = DeviceBuffer.of(y); DeviceBuffer dres = DeviceBuffer.of(res);
             DeviceBuffer dfn = DeviceBuffer.of(fn); DeviceBuffer dbase = DeviceBuffer.of(base);
             DeviceBuffer dscale = DeviceBuffer.of(scale); DeviceBuffer dnorm = DeviceBuffer.of(norm);
             DeviceBuffer mixA = DeviceBuffer.of(mix0); DeviceBuffer mixB = DeviceBuffer.of(mix0);
             DeviceBuffer nextA = DeviceBuffer.allocate(2L * tokens * width);
             DeviceBuffer nextB = DeviceBuffer.allocate(2L * tokens * width);
             DeviceBuffer xA = DeviceBuffer.allocate(2L * tokens * dim);
             DeviceBuffer xB = DeviceBuffer.allocate(2L * tokens * dim);
             DeviceBuffer partials = DeviceBuffer.allocate(partialBytes)) {
            ok(CudaNative.strata_hc_post(dy.address(), dres.address(), mixA.address(), nextA.address(), tokens, HC,
                dim, 0));
            ok(CudaNative.strata_hc_pre(nextA.address(), dfn.address(), dbase.address(), dscale.address(),
                dnorm.address(), xA.address(), mixA.address(), partials.address(), tokens, HC, dim, 20, 1e-6f, 1e-6f,
                0));
            ok(CudaNative.strata_hc_post_pre(dy.address(), dres.address(), nextB.address(), dfn.address(),
                dbase.address(), dscale.address(), dnorm.address(), xB.address(), mixB.address(), partials.address(),
                tokens, HC, dim, 20, 1e-6f, 1e-6f, 0));
            ok(CudaNative.strata_cuda_synchronize());
            short[] streamsA = nextA.downloadShorts(tokens * width);
            assertThat(streamsA).as("the post's streams are not all zero").isNotEqualTo(new short[tokens * width]);
            assertThat(nextB.downloadShorts(tokens * width)).as("streams").isEqualTo(streamsA);
            assertThat(xB.downloadShorts(tokens * dim)).as("normalised input").isEqualTo(xA.downloadShorts(tokens * dim));
            float[] mA = mixA.downloadFloats(tokens * MW);
            assertThat(mA).as("the pre rewrote the mixes").isNotEqualTo(mix0);
            assertThat(mixB.downloadFloats(tokens * MW)).as("mixes").isEqualTo(mA);
        }
    }

    private static short[] bf16(Random rnd, int n, float scale) {
        short[] s = new short[n];
        for (int i = 0; i < n; i++) {
            s[i] = GpuTest.bits(GpuTest.bf16Random(rnd, scale));
        }
        return s;
    }

    private static void ok(int err) {
        assertThat(err).as("CUDA error").isZero();
    }
}
