package io.strata.backend.cuda;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.Fp8E4m3;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cuda.FusedKernels.OutputQuant;
import io.strata.backend.cuda.FusedKernels.Variant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.*;
import static org.assertj.core.api.Assertions.assertThat;

/** F2 (inverse RoPE + per-128 FP8 of the attention output) against the CPU backend's primitives. */
class InverseRopeQuantParityTest {
    private static final int HEAD = 512;

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    record Outcome(byte[] fp8, float[] scales) {
    }

    @Test
    void fusedAndUnfusedMatchTheCpuReference() {
        Random rnd = new Random(8_002);
        int tokens = 9;
        int heads = 3;
        int width = heads * HEAD;
        int blocks = width / 128;
        int tokensPadded = (tokens + 3) / 4 * 4;   // MN-major scales, 16-byte aligned columns
        Rope rope = compressedRope();
        float[] freqs = ropeFreqs(rope);
        float[] o = new float[tokens * width];
        for (int t = 0; t < tokens; t++) {
            for (int b = 0; b < blocks; b++) {
                float mag = (float) Math.pow(2, rnd.nextInt(14) - 7);
                for (int i = 0; i < 128; i++) {
                    o[t * width + b * 128 + i] = bf16Random(rnd, mag);
                }
            }
        }
        int[] positions = new int[tokens];
        for (int t = 0; t < tokens; t++) {
            positions[t] = rnd.nextInt(1 << 20);
        }
        float[] cosSin = RopeTables.cosSin(freqs, positions);
        Outcome fused = run(Variant.FUSED, o, cosSin, tokens, heads, tokensPadded);
        Outcome unfused = run(Variant.UNFUSED, o, cosSin, tokens, heads, tokensPadded);
        assertThat(unfused.fp8()).as("unfused bytes equal fused bytes").isEqualTo(fused.fp8());
        assertThat(unfused.scales()).as("unfused scales equal fused scales").isEqualTo(fused.scales());

        float[] cos = new float[32];
        float[] sin = new float[32];
        int exactRopeBlock = 0;
        int ropeBlockValues = 0;
        float[] gpuDeq = new float[tokens * width];
        float[] cpuDeq = new float[tokens * width];
        for (int t = 0; t < tokens; t++) {
            float[] row = Arrays.copyOfRange(o, t * width, (t + 1) * width);
            rope.angles(positions[t], cos, sin);
            for (int h = 0; h < heads; h++) {
                Rope.rotate(row, h * HEAD + 448, cos, sin, true);
            }
            for (int b = 0; b < blocks; b++) {
                float s = ActivationQuant.fp8BlockScale(row, b * 128, 128);
                float gs = fused.scales()[b * tokensPadded + t];
                boolean ropeBlock = b % 4 == 3;
                if (!ropeBlock) {
                    assertThat(gs).as("token %d block %d scale", t, b).isEqualTo(s);
                }
                for (int i = b * 128; i < b * 128 + 128; i++) {
                    int g = fused.fp8()[t * width + i] & 0xff;
                    int c = fp8Code(row[i], s);
                    gpuDeq[t * width + i] = Fp8E4m3.decode((byte) g) * gs;
                    cpuDeq[t * width + i] = Fp8E4m3.decode((byte) c) * s;
                    if (!ropeBlock) {
                        assertThat(g).as("token %d channel %d", t, i).isEqualTo(c);
                    } else {
                        ropeBlockValues++;
                        if (g == c && gs == s) {
                            exactRopeBlock++;
                        }
                    }
                }
            }
        }
        double err = relativeError(gpuDeq, cpuDeq);
        System.out.printf("F2: no-rope blocks bit-exact; rope blocks %d/%d bytes exact; dequantised relative error %.3e%n",
                exactRopeBlock, ropeBlockValues, err);
        assertThat(err).isLessThanOrEqualTo(1e-2);
    }

    /** The default path into {@code wo_a}: inverse RoPE in bf16, in place, bit-identical to the CPU backend's. */
    @Test
    void bf16InverseRopeIsTheCpuBackendsBitForBit() {
        Random rnd = new Random(8_003);
        int tokens = 11;
        int heads = 5;
        int width = heads * HEAD;
        Rope rope = compressedRope();
        float[] o = new float[tokens * width];
        short[] bits = new short[o.length];
        for (int i = 0; i < o.length; i++) {
            o[i] = bf16Random(rnd, 3f);
            bits[i] = bits(o[i]);
        }
        int[] positions = new int[tokens];
        for (int t = 0; t < tokens; t++) {
            positions[t] = rnd.nextInt(1 << 20);
        }
        float[] cpu = o.clone();
        float[] cos = new float[32];
        float[] sin = new float[32];
        for (int t = 0; t < tokens; t++) {
            rope.angles(positions[t], cos, sin);
            for (int h = 0; h < heads; h++) {
                Rope.rotate(cpu, t * width + h * HEAD + 448, cos, sin, true);
            }
        }
        try (DeviceBuffer dO = DeviceBuffer.of(bits);
             DeviceBuffer dcs = DeviceBuffer.of(RopeTables.cosSin(ropeFreqs(rope), positions))) {
            FusedKernels.inverseRope(dO.address(), tokens, heads, dcs.address(), 0);
            FusedKernels.synchronize();
            short[] gpu = dO.downloadShorts(o.length);
            int rotated = 0;
            for (int i = 0; i < o.length; i++) {
                assertThat(value(gpu[i])).as("channel %d", i % width).isEqualTo(cpu[i]);
                rotated += (i % HEAD) >= 448 && cpu[i] != o[i] ? 1 : 0;
            }
            assertThat(rotated).isGreaterThan(tokens * heads * 32);
            System.out.printf("F2 bf16 (default path): %d values bit-identical to the CPU backend, %d rotated%n",
                    o.length, rotated);
        }
    }

    private static Outcome run(Variant variant, float[] o, float[] cosSin, int tokens, int heads,
                               int tokensPadded) {
        short[] bits = new short[o.length];
        for (int i = 0; i < o.length; i++) {
            bits[i] = bits(o[i]);
        }
        int blocks = heads * HEAD / 128;
        float[] poison = new float[blocks * tokensPadded];
        Arrays.fill(poison, Float.NaN);
        try (DeviceBuffer dO = DeviceBuffer.of(bits);
             DeviceBuffer dcs = DeviceBuffer.of(cosSin); DeviceBuffer out = DeviceBuffer.allocate(o.length);
             DeviceBuffer scales = DeviceBuffer.of(poison);
             DeviceBuffer ws = DeviceBuffer.allocate(FusedKernels.outputQuantWorkspaceBytes(tokens, heads))) {
            out.fill(0x7f);
            FusedKernels.inverseRopeQuant(new OutputQuant(dO.address(), dcs.address(),
                    out.address(), scales.address(), tokens, heads, tokensPadded, 1), variant, ws.address(), 0);
            FusedKernels.synchronize();
            float[] s = scales.downloadFloats(poison.length);
            for (int b = 0; b < blocks; b++) {
                for (int t = 0; t < tokens; t++) {
                    assertThat(s[b * tokensPadded + t]).as("scale written").isFinite();
                }
            }
            return new Outcome(out.downloadBytes(o.length), s);
        }
    }
}
