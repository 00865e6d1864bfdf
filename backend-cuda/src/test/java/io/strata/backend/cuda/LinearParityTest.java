package io.strata.backend.cuda;

import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Fp4Linear;
import io.strata.backend.cpu.ops.Fp8Linear;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cuda.model.DeviceMatrix;
import io.strata.backend.cuda.model.LinearKernels;
import io.strata.backend.cuda.model.WeightFormat;
import io.strata.model.format.ActivationQuant;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.assumeGpu;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LinearKernels} against the CPU backend's linears on the same weight bytes: every format, bf16 and fp32
 * output, decode-sized and prefill-sized batches (both kernels), odd shapes, padded strides, and the grouped
 * {@code wo_a}. bf16 outputs must equal the CPU's or differ by one bf16 ulp (summation order) — or, for outputs
 * that cancel to almost nothing, by at most 1e-5 of the row norm; fp32 outputs within 1e-5 of the row norm.
 */
class LinearParityTest {
    private static final int[] BATCHES = {1, 2, 5, 8, 16, 37, 64, 300};
    private static final Arena ARENA = Arena.ofAuto();

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @Test
    void bf16Weights() {
        check(WeightFormat.BF16, 576, 1000, 1);
        check(WeightFormat.BF16, 4096, 1024, 2);
        check(WeightFormat.BF16, 40, 72, 3);
        // a matrix as wide as an output head: the copy-engine-fed bf16 kernel from 8 rows, its last feature block
        // cut short, K split over clusters of two at the smaller batches
        check(WeightFormat.BF16, 16400, 1024, 17);
    }

    @Test
    void f32Weights() {
        check(WeightFormat.F32, 576, 1000, 4);
        check(WeightFormat.F32, 1000, 4096, 5);
    }

    @Test
    void fp8Weights() {
        check(WeightFormat.FP8_BLOCK128, 1000, 640, 6);
        check(WeightFormat.FP8_BLOCK128, 4096, 1024, 7);
        // the tensor-core decode kernel's edges: a last 16-feature block cut short, K chunks not divisible
        // among the warps that split them
        check(WeightFormat.FP8_BLOCK128, 4100, 1152, 13);
    }

    @Test
    void fp4Weights() {
        check(WeightFormat.FP4_BLOCK32, 576, 1024, 8);
        check(WeightFormat.FP4_BLOCK32, 4096, 1024, 9);
        check(WeightFormat.FP4_BLOCK32, 4100, 1280, 14);
    }

    @Test
    void fp4WeightsWithScaleByteZero() {
        // a scale byte 0 is 2^-127, not a power of two in a float's exponent field: the kernels must notice
        // (strata_fp4_prepare reports it) and take their checked path
        check(WeightFormat.FP4_BLOCK32, 4096, 1024, 15, true);
        check(WeightFormat.FP4_BLOCK32, 576, 1024, 16, true);
    }

    @Test
    void groupedWoA() {
        grouped(WeightFormat.BF16, 4, 256, 1000, 10);
        grouped(WeightFormat.FP8_BLOCK128, 2, 128, 1024, 11);   // the fixtures' wo_a
        grouped(WeightFormat.FP8_BLOCK128, 8, 1024, 4096, 12);  // V4-Flash's
    }

    /** Random weight bytes of a format plus the CPU linears over them. */
    private record Weights(byte[] weight, byte[] scale, Linear rounded, DenseLinear fp32) {
    }

    private static Weights weights(WeightFormat f, int rows, int cols, Random rnd) {
        return weights(f, rows, cols, rnd, false);
    }

    /** zeroScales: every 61st FP4 scale byte is 0 (2^-127). */
    private static Weights weights(WeightFormat f, int rows, int cols, Random rnd, boolean zeroScales) {
        return switch (f) {
            case BF16 -> {
                byte[] w = new byte[2 * rows * cols];
                ByteBuffer b = ByteBuffer.wrap(w).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < rows * cols; i++) {
                    b.putShort(Bf16.fromFloat(GpuTest.bf16Random(rnd, 0.05f)));
                }
                MemorySegment seg = segment(w);
                yield new Weights(w, null, new DenseLinear(seg, true, rows, cols, true),
                    new DenseLinear(seg, true, rows, cols, false));
            }
            case F32 -> {
                byte[] w = new byte[4 * rows * cols];
                ByteBuffer b = ByteBuffer.wrap(w).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < rows * cols; i++) {
                    b.putFloat((float) rnd.nextGaussian() * 0.05f);
                }
                MemorySegment seg = segment(w);
                yield new Weights(w, null, new DenseLinear(seg, false, rows, cols, true),
                    new DenseLinear(seg, false, rows, cols, false));
            }
            case FP8_BLOCK128 -> {
                byte[] w = new byte[rows * cols];
                for (int i = 0; i < w.length; i++) {
                    int v = rnd.nextInt(256);
                    w[i] = (byte) ((v & 0x7f) == 0x7f ? v - 1 : v);  // no NaN codes
                }
                byte[] s = new byte[((rows + 127) / 128) * ((cols + 127) / 128)];
                for (int i = 0; i < s.length; i++) {
                    s[i] = (byte) (116 + rnd.nextInt(5));
                }
                Fp8Linear lin = new Fp8Linear(segment(w), segment(s), rows, cols, true);
                float[] row = new float[cols];
                yield new Weights(w, s, lin, decoded(rows, cols, n -> lin.row(n, row, new byte[cols]), row));
            }
            case FP4_BLOCK32 -> {
                byte[] w = new byte[rows * cols / 2];
                rnd.nextBytes(w);
                byte[] s = new byte[rows * (cols / 32)];
                for (int i = 0; i < s.length; i++) {
                    s[i] = (byte) (zeroScales && i % 61 == 7 ? 0 : 118 + rnd.nextInt(4));
                }
                Fp4Linear lin = new Fp4Linear(segment(w), segment(s), rows, cols);
                float[] row = new float[cols];
                yield new Weights(w, s, lin, decoded(rows, cols, n -> lin.row(n, row, new byte[cols]), row));
            }
        };
    }

    /** An fp32 linear over the dequantized rows: the fp32-output oracle of FP8/FP4 weights. */
    private static DenseLinear decoded(int rows, int cols, java.util.function.IntConsumer decodeRow, float[] row) {
        MemorySegment seg = ARENA.allocate(4L * rows * cols, 16);
        for (int n = 0; n < rows; n++) {
            decodeRow.accept(n);
            MemorySegment.copy(row, 0, seg, ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * n * cols, cols);
        }
        return new DenseLinear(seg, false, rows, cols, false);
    }

    private static MemorySegment segment(byte[] bytes) {
        MemorySegment seg = ARENA.allocate(Math.max(1, bytes.length), 16);
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return seg;
    }

    /** bf16 activations whose 128-channel blocks differ in magnitude (so FP8 scales differ per block). */
    private static float[] activations(int m, int cols, Random rnd) {
        float[] x = new float[m * cols];
        for (int r = 0; r < m; r++) {
            for (int b = 0; b < cols; b += 128) {
                float scale = (float) Math.scalb(1.0, rnd.nextInt(7) - 3);
                for (int c = b; c < Math.min(cols, b + 128); c++) {
                    x[r * cols + c] = GpuTest.bf16Random(rnd, scale);
                }
            }
        }
        return x;
    }

    /** bf16 bits of x [m, cols] laid out with row stride lda. */
    private static short[] strided(float[] x, int m, int cols, int lda) {
        short[] s = new short[m * lda];
        for (int r = 0; r < m; r++) {
            for (int c = 0; c < cols; c++) {
                s[r * lda + c] = Bf16.fromFloat(x[r * cols + c]);
            }
        }
        return s;
    }

    private void check(WeightFormat f, int rows, int cols, long seed) {
        check(f, rows, cols, seed, false);
    }

    private void check(WeightFormat f, int rows, int cols, long seed, boolean zeroScales) {
        Random rnd = new Random(seed);
        Weights w = weights(f, rows, cols, rnd, zeroScales);
        try (DeviceBuffer dw = DeviceBuffer.of(w.weight());
             DeviceBuffer ds = w.scale() == null ? null : DeviceBuffer.of(w.scale())) {
            DeviceMatrix dm = DeviceMatrix.ofCheckpointBytes(f, dw.address(), ds == null ? 0 : ds.address(), rows, cols, 1);
            assertThat(dm.ordinaryScales()).as("ordinary scales").isEqualTo(f == WeightFormat.FP4_BLOCK32 && !zeroScales);
            for (int m : BATCHES) {
                float[] x = activations(m, cols, rnd);
                float[] cpuBf16 = new float[m * rows];
                w.rounded().forward(x, m, cpuBf16);
                float[] xa = x.clone();
                if (f.quantizesInput()) {
                    for (int r = 0; r < m; r++) {
                        ActivationQuant.fp8RoundTrip(xa, r * cols, cols, ActivationQuant.GEMM_BLOCK);
                    }
                }
                float[] cpuF32 = new float[m * rows];
                w.fp32().forward(xa, m, cpuF32);

                int lda = cols + 8;
                int ldy = rows + 3;
                try (DeviceBuffer dx = DeviceBuffer.of(strided(x, m, cols, lda));
                     DeviceBuffer ws = DeviceBuffer.allocate(Math.max(256, LinearKernels.workspaceBytes(m, cols)));
                     DeviceBuffer yb = DeviceBuffer.allocate(2L * m * ldy);
                     DeviceBuffer yf = DeviceBuffer.allocate(4L * m * ldy)) {
                    LinearKernels.linear(dm, dx.address(), lda, m, yb.address(), ldy, true, ws.address(), 0);
                    LinearKernels.linear(dm, dx.address(), lda, m, yf.address(), ldy, false, ws.address(), 0);
                    short[] gb = yb.downloadShorts(m * ldy);
                    float[] gf = yf.downloadFloats(m * ldy);
                    String what = f + " " + rows + "x" + cols + " m=" + m;
                    compareBf16(what, gb, ldy, cpuBf16, m, rows);
                    compareF32(what, gf, ldy, cpuF32, m, rows);
                }
            }
        }
    }

    private void grouped(WeightFormat f, int groups, int oLora, int groupIn, long seed) {
        Random rnd = new Random(seed);
        int rows = groups * oLora;
        Weights[] parts = new Weights[groups];
        byte[] all;
        byte[] allScale = null;
        // the groups' blocks back to back are exactly the [groups*oLora, groupIn] checkpoint matrix
        java.io.ByteArrayOutputStream wb = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream sb = new java.io.ByteArrayOutputStream();
        for (int g = 0; g < groups; g++) {
            parts[g] = weights(f, oLora, groupIn, rnd);
            wb.writeBytes(parts[g].weight());
            if (parts[g].scale() != null) {
                sb.writeBytes(parts[g].scale());
            }
        }
        all = wb.toByteArray();
        if (f == WeightFormat.FP8_BLOCK128) {
            allScale = sb.toByteArray();
        }
        Linear[] cpu = new Linear[groups];
        for (int g = 0; g < groups; g++) {
            cpu[g] = f == WeightFormat.BF16 ? parts[g].rounded()
                : new Fp8Linear(segment(parts[g].weight()), segment(parts[g].scale()), oLora, groupIn, false);
        }
        try (DeviceBuffer dw = DeviceBuffer.of(all);
             DeviceBuffer ds = allScale == null ? null : DeviceBuffer.of(allScale)) {
            DeviceMatrix dm = DeviceMatrix.ofCheckpointBytes(f, dw.address(), ds == null ? 0 : ds.address(), rows, groupIn, 1);
            for (int m : BATCHES) {
                int in = groups * groupIn;
                float[] x = activations(m, in, rnd);
                float[] expect = new float[m * rows];
                float[] xg = new float[m * groupIn];
                float[] yg = new float[m * oLora];
                for (int g = 0; g < groups; g++) {
                    for (int r = 0; r < m; r++) {
                        System.arraycopy(x, r * in + g * groupIn, xg, r * groupIn, groupIn);
                    }
                    cpu[g].forward(xg, m, yg);
                    for (int r = 0; r < m; r++) {
                        System.arraycopy(yg, r * oLora, expect, r * rows + g * oLora, oLora);
                    }
                }
                int lda = in + 16;
                int ldy = rows + 5;
                try (DeviceBuffer dx = DeviceBuffer.of(strided(x, m, in, lda));
                     DeviceBuffer ws = DeviceBuffer.allocate(LinearKernels.workspaceBytes(m, in));
                     DeviceBuffer y = DeviceBuffer.allocate(2L * m * ldy)) {
                    LinearKernels.grouped(dm, groups, dx.address(), lda, m, y.address(), ldy, ws.address(), 0);
                    compareBf16("grouped " + f + " " + groups + "x" + oLora + "x" + groupIn + " m=" + m,
                        y.downloadShorts(m * ldy), ldy, expect, m, rows);
                }
            }
        }
    }

    private static double rowNorm(float[] y, int r, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            s += (double) y[r * n + i] * y[r * n + i];
        }
        return Math.sqrt(s);
    }

    /** Signed-magnitude bf16 bits as an ordered integer: consecutive bf16 values differ by 1. */
    private static int ordered(short bits) {
        int v = bits & 0xffff;
        return (v & 0x8000) != 0 ? -(v & 0x7fff) : v;
    }

    private static void compareBf16(String what, short[] gpu, int ldy, float[] cpu, int m, int rows) {
        int worstUlps = 0;
        int beyondOneUlp = 0;
        double worstRel = 0;
        for (int r = 0; r < m; r++) {
            double norm = rowNorm(cpu, r, rows);
            for (int n = 0; n < rows; n++) {
                float c = cpu[r * rows + n];
                short g = gpu[r * ldy + n];
                int ulps = Math.abs(ordered(g) - ordered(Bf16.fromFloat(c)));
                double rel = Math.abs(Bf16.toFloat(g) - c) / Math.max(norm, 1e-30);
                worstUlps = Math.max(worstUlps, ulps);
                worstRel = Math.max(worstRel, rel);
                if (ulps > 1) {
                    beyondOneUlp++;
                    assertThat(rel).as("%s: [%d, %d] gpu %s cpu %s (%d ulps)", what, r, n, Bf16.toFloat(g), c, ulps)
                        .isLessThanOrEqualTo(1e-5);
                }
            }
        }
        System.out.printf("%-40s bf16: worst %d ulps, %d beyond 1 ulp, worst %.2e of row norm%n", what, worstUlps,
            beyondOneUlp, worstRel);
    }

    private static void compareF32(String what, float[] gpu, int ldy, float[] cpu, int m, int rows) {
        double worst = 0;
        for (int r = 0; r < m; r++) {
            double norm = rowNorm(cpu, r, rows);
            for (int n = 0; n < rows; n++) {
                double rel = Math.abs(gpu[r * ldy + n] - cpu[r * rows + n]) / Math.max(norm, 1e-30);
                worst = Math.max(worst, rel);
            }
        }
        System.out.printf("%-40s fp32: worst %.2e of row norm%n", what, worst);
        assertThat(worst).as(what + " fp32 output vs CPU").isLessThanOrEqualTo(1e-5);
    }
}
