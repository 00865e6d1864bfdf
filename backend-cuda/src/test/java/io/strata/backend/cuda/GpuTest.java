package io.strata.backend.cuda;

import io.strata.model.format.ActivationQuant;
import io.strata.spi.ProbeResult;
import org.junit.jupiter.api.Assumptions;

import java.util.Random;

/** Shared helpers for the GPU parity tests: skip (and say why) only where no GPU is usable. */
public final class GpuTest {
    private GpuTest() {
    }

    public static void assumeGpu() {
        ProbeResult r = new CudaBackendProvider().probe();
        if (!r.available()) {
            String why = "GPU parity test skipped, no usable GPU here: " + r.reason();
            System.out.println(why);
            Assumptions.assumeTrue(false, why);
        }
    }

    /** A bf16-representable value with a spread of magnitudes (so blocks get different scales). */
    static float bf16Random(Random rnd, float scale) {
        return io.strata.model.format.Bf16.round((float) rnd.nextGaussian() * scale);
    }

    static short bits(float bf16) {
        return (short) io.strata.model.format.Bf16.fromFloat(bf16);
    }

    /**
     * A device buffer of {@code bytes} with every bit set (a NaN in bf16 and fp32, -1 as an int), so an output that no
     * launch writes shows.
     */
    static DeviceBuffer unwritten(long bytes) {
        DeviceBuffer b = DeviceBuffer.allocate(bytes);
        try {
            b.fill(0xff);
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    static float value(short bits) {
        return io.strata.model.format.Bf16.toFloat(bits);
    }

    /** The CPU backend's FP8 round trip (per 128 channels) of bf16 rows of {@code dim}, as bf16 bits. */
    static short[] fp8RoundTrip(short[] rows, int dim) {
        float[] v = new float[rows.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = value(rows[i]);
        }
        for (int r = 0; r < rows.length / dim; r++) {
            ActivationQuant.fp8RoundTrip(v, r * dim, dim, ActivationQuant.GEMM_BLOCK);
        }
        short[] out = new short[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = bits(v[i]);
        }
        return out;
    }

    /** ||a - b|| / ||b|| over paired values. */
    public static double relativeError(float[] a, float[] b) {
        double num = 0, den = 0;
        for (int i = 0; i < a.length; i++) {
            double d = (double) a[i] - b[i];
            num += d * d;
            den += (double) b[i] * b[i];
        }
        return den == 0 ? Math.sqrt(num) : Math.sqrt(num / den);
    }

    /** ||ours - ref|| / ||ref|| over row {@code t} of two {@code [rows, dim]} arrays. */
    public static double rowError(float[] ours, float[] ref, int t, int dim) {
        double num = 0;
        double den = 0;
        for (int d = 0; d < dim; d++) {
            double diff = ours[t * dim + d] - ref[t * dim + d];
            num += diff * diff;
            den += (double) ref[t * dim + d] * ref[t * dim + d];
        }
        return Math.sqrt(num / Math.max(den, 1e-30));
    }

    static float[] ropeFreqs(io.strata.backend.cpu.ops.Rope rope) {
        float[] f = new float[rope.dim() / 2];
        for (int i = 0; i < f.length; i++) {
            f[i] = rope.frequency(i);
        }
        return f;
    }

    /** The V4 compressed-layer RoPE: theta 160000 with YaRN factor 16 over 65536. */
    static io.strata.backend.cpu.ops.Rope compressedRope() {
        return new io.strata.backend.cpu.ops.Rope(64, 160000, 65536, 16, 32, 1);
    }

    /** e4m3 byte the reference produces for x with power-of-two scale s. */
    static int fp8Code(float x, float s) {
        float q = Math.max(-448f, Math.min(448f, x / s));
        return io.strata.model.format.Fp8E4m3.encode(q) & 0xff;
    }
}
