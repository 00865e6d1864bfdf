package io.strata.backend.cuda;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.E8m0;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.ops.Rope;
import io.strata.backend.cuda.FusedKernels.QkvStep;
import io.strata.backend.cuda.FusedKernels.Variant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.*;
import static org.assertj.core.api.Assertions.assertThat;

/** F3 (Q head norm + Q RoPE + KV RoPE + FP8 + SWA insert) against the CPU backend's primitives. */
class QkvRopeQuantParityTest {
    private static final int HEAD = 512;
    private static final float EPS = 1e-6f;
    private static final byte POISON = 0x5a;

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    record Outcome(short[] q, byte[] cache) {
    }

    @Test
    void fusedAndUnfusedMatchTheCpuReference() {
        Random rnd = new Random(8_003);
        int tokens = 7;
        int heads = 5;
        int entriesPerPage = 64;
        EntryLayout layout = EntryLayout.mainSplit(entriesPerPage, 37_440);
        Rope rope = compressedRope();
        float[] freqs = ropeFreqs(rope);

        float[] q = new float[tokens * heads * HEAD];
        float[] kv = new float[tokens * HEAD];
        for (int i = 0; i < q.length; i++) {
            q[i] = bf16Random(rnd, (float) Math.pow(2, rnd.nextInt(8) - 4));
        }
        for (int t = 0; t < tokens; t++) {
            for (int b = 0; b < HEAD / 64; b++) {
                float mag = (float) Math.pow(2, rnd.nextInt(12) - 6);  // per-block dynamic range
                for (int i = 0; i < 64; i++) {
                    kv[t * HEAD + b * 64 + i] = bf16Random(rnd, mag);
                }
            }
        }
        int[] positions = new int[tokens];
        long[] slots = new long[tokens];
        for (int t = 0; t < tokens; t++) {
            positions[t] = rnd.nextInt(200_000);
            slots[t] = t == 3 ? -1 : 64L * (t % 3) + 5 * t;  // token 3 is padding
        }
        int pages = 3;

        float[] cosSin = RopeTables.cosSin(freqs, positions);
        Outcome fused = run(Variant.FUSED, q, kv, slots, cosSin, layout, tokens, heads, pages);
        Outcome unfused = run(Variant.UNFUSED, q, kv, slots, cosSin, layout, tokens, heads, pages);
        assertThat(unfused.q()).as("unfused q equals fused q bit for bit").isEqualTo(fused.q());
        assertThat(unfused.cache()).as("unfused cache equals fused cache bit for bit").isEqualTo(fused.cache());

        // ---- CPU reference ----
        float[] cos = new float[32];
        float[] sin = new float[32];
        float[] gpuQ = new float[q.length];
        float[] cpuQ = q.clone();
        int exactQ = 0;
        for (int t = 0; t < tokens; t++) {
            rope.angles(positions[t], cos, sin);
            for (int h = 0; h < heads; h++) {
                int off = (t * heads + h) * HEAD;
                RmsNorm.headNormBf16(cpuQ, off, HEAD, EPS);
                Rope.rotate(cpuQ, off + 448, cos, sin, false);
            }
        }
        for (int i = 0; i < q.length; i++) {
            gpuQ[i] = value(fused.q()[i]);
            if (Float.floatToIntBits(gpuQ[i]) == Float.floatToIntBits(cpuQ[i])) {
                exactQ++;
            }
        }
        double qErr = relativeError(gpuQ, cpuQ);
        System.out.printf("F3 q: %d/%d bf16 values bit-exact, relative error %.3e%n", exactQ, q.length, qErr);
        assertThat(qErr).isLessThanOrEqualTo(1e-2);

        byte[] cache = fused.cache();
        boolean[] touched = new boolean[cache.length];
        int exactRope = 0;
        for (int t = 0; t < tokens; t++) {
            if (slots[t] < 0) {
                continue;
            }
            float[] row = Arrays.copyOfRange(kv, t * HEAD, (t + 1) * HEAD);
            rope.angles(positions[t], cos, sin);
            Rope.rotate(row, 448, cos, sin, false);
            int data = (int) layout.dataOffset(slots[t]);
            int sc = (int) layout.scaleOffset(slots[t]);
            for (int b = 0; b < 7; b++) {
                float s = ActivationQuant.fp8BlockScale(row, b * 64, 64);
                assertThat(cache[sc + b] & 0xff).as("token %d scale %d", t, b).isEqualTo(E8m0.encode(s) & 0xff);
                for (int i = b * 64; i < b * 64 + 64; i++) {
                    assertThat(cache[data + i] & 0xff).as("token %d fp8 channel %d", t, i).isEqualTo(fp8Code(row[i], s));
                }
            }
            assertThat(cache[sc + 7]).as("pad byte").isZero();
            float[] gpuRope = new float[64];
            float[] cpuRope = Arrays.copyOfRange(row, 448, 512);
            for (int i = 0; i < 64; i++) {
                int lo = cache[data + 448 + 2 * i] & 0xff;
                int hi = cache[data + 448 + 2 * i + 1] & 0xff;
                gpuRope[i] = value((short) (lo | hi << 8));
                if (Float.floatToIntBits(gpuRope[i]) == Float.floatToIntBits(cpuRope[i])) {
                    exactRope++;
                }
            }
            assertThat(relativeError(gpuRope, cpuRope)).as("token %d rope part", t).isLessThanOrEqualTo(1e-2);
            Arrays.fill(touched, data, data + 576, true);
            Arrays.fill(touched, sc, sc + 8, true);
        }
        System.out.printf("F3 kv: FP8 bytes and scales bit-exact; rope %d/%d bit-exact%n", exactRope, 6 * 64);
        for (int i = 0; i < cache.length; i++) {
            if (!touched[i]) {
                assertThat(cache[i]).as("byte %d outside the written entries (padding token must not write)", i)
                        .isEqualTo(POISON);
            }
        }
    }

    private static Outcome run(Variant variant, float[] q, float[] kv, long[] slots, float[] cosSin,
                               EntryLayout layout, int tokens, int heads, int pages) {
        short[] qBits = new short[q.length];
        short[] kvBits = new short[kv.length];
        for (int i = 0; i < q.length; i++) {
            qBits[i] = bits(q[i]);
        }
        for (int i = 0; i < kv.length; i++) {
            kvBits[i] = bits(kv[i]);
        }
        int cacheBytes = (int) (pages * layout.pageBytes());
        try (DeviceBuffer dq = DeviceBuffer.of(qBits); DeviceBuffer dkv = DeviceBuffer.of(kvBits);
             DeviceBuffer dslots = DeviceBuffer.of(slots);
             DeviceBuffer dcs = DeviceBuffer.of(cosSin); DeviceBuffer cache = DeviceBuffer.allocate(cacheBytes);
             DeviceBuffer ws = DeviceBuffer.allocate(FusedKernels.qkvWorkspaceBytes(tokens))) {
            cache.fill(POISON);
            FusedKernels.qNormRopeKvInsert(new QkvStep(dq.address(), dkv.address(), dslots.address(),
                    dcs.address(), cache.address(), layout, tokens, heads, EPS), variant, ws.address(), 0);
            FusedKernels.synchronize();
            return new Outcome(dq.downloadShorts(q.length), cache.downloadBytes(cacheBytes));
        }
    }
}
