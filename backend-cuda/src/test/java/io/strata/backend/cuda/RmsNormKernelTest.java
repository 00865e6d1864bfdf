package io.strata.backend.cuda;

import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static io.strata.backend.cuda.GpuTest.assumeGpu;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attention's two norms of the stacked q latent and K=V row ({@code strata_rms_norm_pair}, one launch) give bit
 * for bit what one {@code strata_rms_norm} each gives, and both are the CPU backend's {@link RmsNorm} within one bf16
 * step (the sum of squares runs in another order): V4-Flash's widths (1024 + 512 in a row of 1536) and odd ones.
 * The first norm's FP8 round trip, asked for alongside, is the CPU backend's bit for bit.
 */
class RmsNormKernelTest {

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @Test
    void twoNormsInOneLaunchEqualOneLaunchEach() {
        Random rnd = new Random(29);
        int[][] shapes = {{1024, 512, 1}, {1024, 512, 37}, {96, 200, 5}};
        for (int[] shape : shapes) {
            int n1 = shape[0];
            int n2 = shape[1];
            int rows = shape[2];
            int width = n1 + n2;
            float eps = 1e-6f;
            float[] x = new float[rows * width];
            for (int i = 0; i < x.length; i++) {
                x[i] = GpuTest.bf16Random(rnd, (float) Math.scalb(1.0, rnd.nextInt(5) - 2));
            }
            float[] w1 = weights(n1, rnd);
            float[] w2 = weights(n2, rnd);
            short[] bits = new short[x.length];
            for (int i = 0; i < x.length; i++) {
                bits[i] = GpuTest.bits(x[i]);
            }
            String what = n1 + " + " + n2 + " channels, " + rows + " rows";
            try (DeviceBuffer dx = DeviceBuffer.of(bits);
                 DeviceBuffer dw1 = DeviceBuffer.of(w1);
                 DeviceBuffer dw2 = DeviceBuffer.of(w2);
                 DeviceBuffer a1 = GpuTest.unwritten(2L * rows * n1);
                 DeviceBuffer a2 = GpuTest.unwritten(2L * rows * n2);
                 DeviceBuffer p1 = GpuTest.unwritten(2L * rows * n1);
                 DeviceBuffer p2 = GpuTest.unwritten(2L * rows * n2);
                 DeviceBuffer q1 = GpuTest.unwritten(2L * rows * n1);
                 DeviceBuffer pq1 = GpuTest.unwritten(2L * rows * n1)) {
                // the first norm's FP8 round trip (the q latent's, for the FP8 up-projections) where its width is
                // whole 128-channel blocks
                boolean blocks = n1 % 128 == 0;
                CudaRuntime.check(CudaNative.strata_rms_norm(dx.address(), width, dw1.address(), a1.address(), n1,
                    blocks ? q1.address() : 0, rows, n1, eps, 0), what);
                CudaRuntime.check(CudaNative.strata_rms_norm(dx.address() + 2L * n1, width, dw2.address(), a2.address(),
                    n2, 0, rows, n2, eps, 0), what);
                CudaRuntime.check(CudaNative.strata_rms_norm_pair(dx.address(), width, dw1.address(), p1.address(), n1,
                    blocks ? pq1.address() : 0, n1, dx.address() + 2L * n1, width, dw2.address(), p2.address(), n2, n2,
                    rows, eps, 0), what);
                short[] single1 = a1.downloadShorts(rows * n1);
                short[] single2 = a2.downloadShorts(rows * n2);
                assertThat(p1.downloadShorts(rows * n1)).as(what + ": first norm").isEqualTo(single1);
                assertThat(p2.downloadShorts(rows * n2)).as(what + ": second norm").isEqualTo(single2);
                if (blocks) {
                    short[] rounded = GpuTest.fp8RoundTrip(single1, n1);
                    assertThat(q1.downloadShorts(rows * n1)).as(what + ": first norm's FP8 round trip").isEqualTo(rounded);
                    assertThat(pq1.downloadShorts(rows * n1)).as(what + ": the pair's").isEqualTo(rounded);
                } else {
                    assertThat(CudaNative.strata_rms_norm(dx.address(), width, dw1.address(), a1.address(), n1,
                        q1.address(), rows, n1, eps, 0)).as(what + ": a round trip of partial blocks").isNotZero();
                }
                int off = 0;
                for (int r = 0; r < rows; r++) {
                    off = Math.max(off, ulpsFromCpu(x, r * width, w1, eps, single1, r * n1, n1));
                    off = Math.max(off, ulpsFromCpu(x, r * width + n1, w2, eps, single2, r * n2, n2));
                }
                assertThat(off).as(what + ": bf16 steps from the CPU backend").isLessThanOrEqualTo(1);
                System.out.printf("%-32s pair identical to singles, at most %d bf16 step from the CPU%n", what, off);
            }
        }
    }

    private static float[] weights(int n, Random rnd) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = 0.5f + rnd.nextFloat();
        }
        return w;
    }

    /** The most bf16 steps between the device's normalised row and {@link RmsNorm#apply} of the same row. */
    private static int ulpsFromCpu(float[] x, int xOff, float[] w, float eps, short[] gpu, int gOff, int n) {
        float[] cpu = new float[n];
        RmsNorm.apply(x, xOff, w, eps, cpu, 0, n);
        int most = 0;
        for (int i = 0; i < n; i++) {
            int a = Bf16.fromFloat(cpu[i]);
            int b = gpu[gOff + i];
            most = Math.max(most, Math.abs(a - b));  // same sign here (weights positive): bit distance is step count
        }
        return most;
    }
}
