package io.strata.backend.cuda;

import io.strata.backend.cpu.ops.HyperConnection;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.format.ActivationQuant;
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
 * the mixes' several-tokens-per-CTA threshold and with a last CTA of fewer tokens; and the pre alone against the
 * CPU backend's {@link HyperConnection} (mixes, Sinkhorn split, pre-mix, RMSNorm) at every kernel shape: one and a
 * few tokens (the mixes' row groups), from 16 tokens (several tokens per CTA, an odd last one), a width whose
 * splits are not 1,024 columns, two 8-channel groups per norm thread, and a dim that is not a multiple of 8. Where
 * the dim is whole 128-channel blocks, the output's FP8 round trip (the input of the sub-layer's FP8/FP4 linears)
 * must be the CPU backend's {@link ActivationQuant#fp8RoundTrip} of the output, bit for bit, from the register form
 * and from the shared-memory form (a dim past two 8-channel groups per thread), whose round trip is a kernel of its
 * own. With the Sinkhorn iterations left to {@code strata_hc_sinkhorn} (two streams), pre, post, comb and the input
 * must be those of the pre that runs them itself, bit for bit.
 */
class HyperConnectionKernelsTest {
    private static final int HC = 4;
    private static final int MIX = (2 + HC) * HC;
    private static final int MW = 2 * HC + HC * HC;
    /** How far the GPU's pre, post and comb may be from the CPU's, relative: the mixes' sums in another order. */
    private static final double MIX_TOLERANCE = 1e-4;

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
        Weights wt = Weights.random(rnd, dim);
        float[] fn = wt.fn();
        float[] base = wt.base();
        float[] scale = wt.scale();
        float[] norm = wt.norm();
        long partialBytes = Math.max(4, CudaNative.strata_hc_partials_bytes(tokens, HC, dim));
        try (DeviceBuffer dy = DeviceBuffer.of(y); DeviceBuffer dres = DeviceBuffer.of(res);
             DeviceBuffer dfn = DeviceBuffer.of(fn); DeviceBuffer dbase = DeviceBuffer.of(base);
             DeviceBuffer dscale = DeviceBuffer.of(scale); DeviceBuffer dnorm = DeviceBuffer.of(norm);
             DeviceBuffer mixA = DeviceBuffer.of(mix0); DeviceBuffer mixB = DeviceBuffer.of(mix0);
             DeviceBuffer nextA = DeviceBuffer.allocate(2L * tokens * width);
             DeviceBuffer nextB = DeviceBuffer.allocate(2L * tokens * width);
             DeviceBuffer xA = DeviceBuffer.allocate(2L * tokens * dim);
             DeviceBuffer xB = DeviceBuffer.allocate(2L * tokens * dim);
             DeviceBuffer xqA = GpuTest.unwritten(2L * tokens * dim);
             DeviceBuffer xqB = GpuTest.unwritten(2L * tokens * dim);
             DeviceBuffer partials = DeviceBuffer.allocate(partialBytes)) {
            ok(CudaNative.strata_hc_post(dy.address(), dres.address(), mixA.address(), nextA.address(), tokens, HC,
                dim, 0));
            ok(CudaNative.strata_hc_pre(nextA.address(), dfn.address(), dbase.address(), dscale.address(),
                dnorm.address(), xA.address(), xqA.address(), mixA.address(), partials.address(), tokens, HC, dim, 20,
                1e-6f, 1e-6f, 0, 0));
            // the fused step with its Sinkhorn iterations left to the kernel of their own (as on two streams)
            ok(CudaNative.strata_hc_post_pre(dy.address(), dres.address(), nextB.address(), dfn.address(),
                dbase.address(), dscale.address(), dnorm.address(), xB.address(), xqB.address(), mixB.address(),
                partials.address(), tokens, HC, dim, 20, 1e-6f, 1e-6f, 1, 0));
            ok(CudaNative.strata_hc_sinkhorn(mixB.address(), dbase.address(), dscale.address(), tokens, HC, 20, 1e-6f, 0));
            ok(CudaNative.strata_cuda_synchronize());
            short[] streamsA = nextA.downloadShorts(tokens * width);
            assertThat(streamsA).as("the post's streams are not all zero").isNotEqualTo(new short[tokens * width]);
            assertThat(nextB.downloadShorts(tokens * width)).as("streams").isEqualTo(streamsA);
            short[] inputA = xA.downloadShorts(tokens * dim);
            assertThat(xB.downloadShorts(tokens * dim)).as("normalised input").isEqualTo(inputA);
            short[] roundedA = xqA.downloadShorts(tokens * dim);
            assertThat(roundedA).as("its FP8 round trip").isEqualTo(GpuTest.fp8RoundTrip(inputA, dim));
            assertThat(xqB.downloadShorts(tokens * dim)).as("its FP8 round trip, fused step").isEqualTo(roundedA);
            float[] mA = mixA.downloadFloats(tokens * MW);
            assertThat(mA).as("the pre rewrote the mixes").isNotEqualTo(mix0);
            assertThat(mixB.downloadFloats(tokens * MW)).as("mixes").isEqualTo(mA);
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 4096", "3, 4096", "16, 4096", "64, 4096", "67, 4096", "20, 7168", "17, 260", "2, 260", "2, 8320"})
    void preMatchesTheCpuBackend(int tokens, int dim) {
        Random rnd = new Random(tokens * 17L + dim);
        int width = HC * dim;
        short[] h = bf16(rnd, tokens * width, 1f);
        Weights wt = Weights.random(rnd, dim);
        float[] fn = wt.fn();
        float[] base = wt.base();
        float[] scale = wt.scale();
        float[] norm = wt.norm();
        float eps = 1e-6f;
        short[] x;
        float[] m;
        try (DeviceBuffer dh = DeviceBuffer.of(h); DeviceBuffer dfn = DeviceBuffer.of(fn);
             DeviceBuffer dbase = DeviceBuffer.of(base); DeviceBuffer dscale = DeviceBuffer.of(scale);
             DeviceBuffer dnorm = DeviceBuffer.of(norm); DeviceBuffer dx = DeviceBuffer.allocate(2L * tokens * dim);
             DeviceBuffer dmix = DeviceBuffer.allocate(4L * tokens * MW);
             DeviceBuffer dxq = GpuTest.unwritten(2L * tokens * dim);
             DeviceBuffer partials = DeviceBuffer.allocate(Math.max(4, CudaNative.strata_hc_partials_bytes(tokens, HC, dim)))) {
            // the FP8 round trip of the output rides along where whole 128-channel blocks allow it, and is refused
            // elsewhere (the linears that read it need in features % 128 == 0)
            boolean blocks = dim % 128 == 0;
            if (!blocks) {
                assertThat(CudaNative.strata_hc_pre(dh.address(), dfn.address(), dbase.address(), dscale.address(),
                    dnorm.address(), dx.address(), dxq.address(), dmix.address(), partials.address(), tokens, HC, dim,
                    20, eps, eps, 0, 0)).as("a round trip of a dim that is not whole blocks").isNotZero();
            }
            ok(CudaNative.strata_hc_pre(dh.address(), dfn.address(), dbase.address(), dscale.address(), dnorm.address(),
                dx.address(), blocks ? dxq.address() : 0, dmix.address(), partials.address(), tokens, HC, dim, 20, eps,
                eps, 0, 0));
            ok(CudaNative.strata_cuda_synchronize());
            x = dx.downloadShorts(tokens * dim);
            m = dmix.downloadFloats(tokens * MW);
            // the Sinkhorn iterations left to the kernel of their own: the same input, the same mixes
            try (DeviceBuffer later = GpuTest.unwritten(4L * tokens * MW);
                 DeviceBuffer laterX = GpuTest.unwritten(2L * tokens * dim)) {
                ok(CudaNative.strata_hc_pre(dh.address(), dfn.address(), dbase.address(), dscale.address(),
                    dnorm.address(), laterX.address(), 0, later.address(), partials.address(), tokens, HC, dim, 20,
                    eps, eps, 1, 0));
                ok(CudaNative.strata_hc_sinkhorn(later.address(), dbase.address(), dscale.address(), tokens, HC, 20,
                    eps, 0));
                ok(CudaNative.strata_cuda_synchronize());
                assertThat(laterX.downloadShorts(tokens * dim)).as("input, Sinkhorn later").isEqualTo(x);
                assertThat(later.downloadFloats(tokens * MW)).as("pre, post and comb, Sinkhorn later").isEqualTo(m);
            }
            if (blocks) {
                assertThat(dxq.downloadShorts(tokens * dim)).as("the output's FP8 round trip")
                    .isEqualTo(GpuTest.fp8RoundTrip(x, dim));
            }
        }
        float[] streams = new float[width];
        float[] mixes = new float[MIX];
        float[] ref = new float[dim];
        double worstMix = 0;
        int off = 0;
        for (int t = 0; t < tokens; t++) {
            for (int i = 0; i < width; i++) {
                streams[i] = GpuTest.value(h[t * width + i]);
            }
            HyperConnection.mixes(streams, 0, width, fn, MIX, eps, mixes);
            HyperConnection.Mix mix = HyperConnection.Mix.allocate(HC);
            HyperConnection.split(mixes, scale, base, HC, 20, eps, mix);
            float[] want = new float[MW];
            System.arraycopy(mix.pre(), 0, want, 0, HC);
            System.arraycopy(mix.post(), 0, want, HC, HC);
            System.arraycopy(mix.comb(), 0, want, 2 * HC, HC * HC);
            for (int i = 0; i < MW; i++) {
                worstMix = Math.max(worstMix, Math.abs(m[t * MW + i] - want[i]) / Math.max(Math.abs(want[i]), 1e-3));
            }
            HyperConnection.pre(streams, 0, mix.pre(), HC, dim, ref, 0);
            float inv = RmsNorm.invRms(ref, 0, dim, eps);
            float[] premix = ref.clone();
            RmsNorm.apply(ref, 0, norm, eps, ref, 0, dim);
            for (int d = 0; d < dim; d++) {
                float got = GpuTest.value(x[t * dim + d]);
                float exp = ref[d];
                if (got != exp) {
                    off++;
                    // summation order only: the pre weights are within MIX_TOLERANCE of the CPU's, which moves the
                    // pre-mix sum by at most that times the sum of its terms' magnitudes, scaled by the norm; a
                    // move across a rounding boundary of bf16(sum), which the norm's scaling can make two of the
                    // output's steps, and the last rounding one more
                    double terms = 0;
                    for (int k = 0; k < HC; k++) {
                        terms += Math.abs(mix.pre()[k] * streams[k * dim + d]);
                    }
                    double bound = 3 * Math.ulp(exp) * 65536.0 + norm[d] * inv * terms * MIX_TOLERANCE
                        + norm[d] * inv * Math.ulp(premix[d]) * 65536.0;
                    assertThat((double) Math.abs(got - exp)).as("token %d channel %d: %s vs %s", t, d, got, exp)
                        .isLessThanOrEqualTo(bound);
                }
            }
        }
        assertThat(worstMix).as("pre, post and comb against the CPU (relative)").isLessThan(MIX_TOLERANCE);
        System.out.printf("hc pre %d tokens x %d: mixes within %.2e of the CPU, %d of %d channels off%n", tokens, dim, worstMix, off, tokens * dim);
        assertThat(off).as("channels that differ from the CPU (of %d)", tokens * dim).isLessThanOrEqualTo(tokens * dim / 100);
        assertThat(x).as("the normalised input is not all zero").isNotEqualTo(new short[tokens * dim]);
    }

    /** A sub-layer's hyper-connection weights at {@code dim}: mix rows fn, their biases and scales, the norm. */
    private record Weights(float[] fn, float[] base, float[] scale, float[] norm) {
        static Weights random(Random rnd, int dim) {
            float[] fn = new float[MIX * HC * dim];
            for (int i = 0; i < fn.length; i++) {
                fn[i] = (float) rnd.nextGaussian() * 0.01f;
            }
            float[] base = new float[MIX];
            for (int i = 0; i < MIX; i++) {
                base[i] = (float) rnd.nextGaussian() * 0.1f;
            }
            float[] norm = new float[dim];
            for (int i = 0; i < dim; i++) {
                norm[i] = 0.5f + rnd.nextFloat();
            }
            return new Weights(fn, base, new float[] {0.7f, 1.1f, 0.9f}, norm);
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
