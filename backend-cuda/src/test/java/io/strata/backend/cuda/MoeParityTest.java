package io.strata.backend.cuda;

import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cpu.model.CpuModel;
import io.strata.backend.cpu.model.MoeLayer;
import io.strata.backend.cpu.weights.CheckpointTensors;
import io.strata.backend.cuda.model.DeviceMatrix;
import io.strata.backend.cuda.model.DeviceMoe;
import io.strata.backend.cuda.model.WeightFormat;
import io.strata.backend.cuda.model.WeightStore;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.CheckpointException;
import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.checkpoint.TensorSet;
import io.strata.model.config.ModelConfig;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiConsumer;

import static io.strata.backend.cuda.GpuTest.assumeGpu;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DeviceMoe} against (a) the reference's recorded MoE inputs and outputs of dsv4-tiny-fp8 (the README's
 * module criteria) and (b) the CPU backend's {@link MoeLayer} on the same inputs: the fixtures (FP4 and BF16
 * routed experts), and synthetic checkpoints with 64 experts, top-6 (FP4, and FP8 routed experts), hash and
 * score-routed layers, 1, 7 and 300 tokens. Against the CPU the expert ids must be identical and every output
 * within 2 bf16 ulps or 1e-3 of its row's norm.
 */
class MoeParityTest {
    private static final int[] BATCHES = {1, 7, 300};

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    private static Path models() {
        // Maven sets the property; a device run starts in the repository root
        String p = System.getProperty("strata.models.dir");
        return p != null ? Path.of(p) : Path.of("models");
    }

    @Test
    void fixtureMatchesTheReferenceModuleOutputs() {
        Path dir = models().resolve("dsv4-tiny-fp8");
        ModelConfig cfg = parse(dir);
        try (Checkpoint ckpt = Checkpoint.open(dir);
             SafetensorsFile expected = SafetensorsFile.open(dir.resolve("expected.safetensors"));
             WeightStore store = new WeightStore()) {
            int dim = cfg.hiddenSize();
            int k = cfg.moe().numExpertsPerToken();
            for (int l = 0; l < cfg.numHiddenLayers(); l++) {
                String p = "io.layers." + l + ".ffn.";
                float[] x = expected.tensor(p + "in0").toFloatArray();
                int m = x.length / dim;
                int[] tokens = expected.tensor(p + "in1").toIntArray();
                DeviceMoe moe = DeviceMoe.load(store, ckpt, cfg, cfg.schedule().layer(l));
                Result r = run(moe, cfg, x, tokens, m);
                int[] refIds = expected.tensor(p + "gate.out1").toIntArray();
                float[] refW = expected.tensor(p + "gate.out0").toFloatArray();
                int same = 0;
                double weightErr = 0;
                for (int t = 0; t < m; t++) {
                    if (Arrays.equals(r.ids, t * k, (t + 1) * k, refIds, t * k, (t + 1) * k)) {
                        same++;
                        for (int j = 0; j < k; j++) {
                            weightErr = Math.max(weightErr, Math.abs(r.weights[t * k + j] - refW[t * k + j]));
                        }
                    }
                }
                float[] ref = expected.tensor(p + "out0").toFloatArray();
                int within = 0;
                double worst = 0;
                for (int t = 0; t < m; t++) {
                    double e = GpuTest.rowError(r.out, ref, t, dim);
                    worst = Math.max(worst, e);
                    within += e <= 2e-2 ? 1 : 0;
                }
                System.out.printf("fp8 fixture layer %d vs reference: %d/%d identical selections (max weight error"
                    + " %.2e), %d/%d tokens within 2e-2, worst row error %.3e%n", l, same, m, weightErr, within, m, worst);
                assertThat((double) same / m).as("layer %d selections", l).isGreaterThanOrEqualTo(0.99);
                assertThat(weightErr).as("layer %d routing weights", l).isLessThan(1e-3);
                assertThat((double) within / m).as("layer %d MoE outputs", l).isGreaterThanOrEqualTo(0.95);
            }
        }
    }

    @Test
    void fp8FixtureMatchesTheCpu() {
        Path dir = models().resolve("dsv4-tiny-fp8");
        try (Checkpoint ckpt = Checkpoint.open(dir);
             SafetensorsFile expected = SafetensorsFile.open(dir.resolve("expected.safetensors"))) {
            ModelConfig cfg = parse(dir);
            float[] x = expected.tensor("io.layers.3.ffn.in0").toFloatArray();
            int[] tokens = expected.tensor("io.layers.3.ffn.in1").toIntArray();
            againstCpu("fp8 fixture", cfg, ckpt, x, tokens);
        }
    }

    @Test
    void stableFixtureWithBf16ExpertsMatchesTheCpu() {
        Path dir = models().resolve("dsv4-tiny-stable");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isRegularFile(dir.resolve("config.json")),
            "dsv4-tiny-stable is not on this host (a GPU run carries only dsv4-tiny-fp8)");
        try (Checkpoint ckpt = Checkpoint.open(dir)) {
            ModelConfig cfg = parse(dir);
            Random rnd = new Random(21);
            againstCpu("stable fixture", cfg, ckpt, randomInput(rnd, 300, cfg.hiddenSize()),
                randomTokens(rnd, 300, cfg.vocabSize()));
        }
    }

    @Test
    void syntheticFp4ExpertsMatchTheCpu(@TempDir Path tmp) throws Exception {
        SyntheticCheckpoint.write(SHAPE, tmp);
        try (Checkpoint ckpt = Checkpoint.open(tmp)) {
            ModelConfig cfg = parse(tmp);
            Random rnd = new Random(22);
            againstCpu("synthetic fp4", cfg, ckpt, randomInput(rnd, 300, cfg.hiddenSize()),
                randomTokens(rnd, 300, cfg.vocabSize()));
        }
    }

    @Test
    void syntheticFp8ExpertsMatchTheCpu(@TempDir Path tmp) throws Exception {
        SyntheticCheckpoint.write(SHAPE, tmp);
        try (Checkpoint ckpt = Checkpoint.open(tmp); Arena arena = Arena.ofShared()) {
            ModelConfig cfg = parse(tmp);
            TensorSet fp8 = withFp8Experts(ckpt, cfg, arena, new Random(23));
            Random rnd = new Random(24);
            againstCpu("synthetic fp8", cfg, fp8, randomInput(rnd, 300, cfg.hiddenSize()),
                randomTokens(rnd, 300, cfg.vocabSize()));
        }
    }

    /**
     * w1 and w3 in one paired launch give bit for bit the outputs of one launch each, for every kernel the routed
     * experts can take (tiles of 1 slot: SIMT; 8: the decode kernel; 64: the tensor-core kernel), FP4 and FP8
     * weights, and routings where some experts have more slots than a tile holds.
     */
    @Test
    void pairedExpertLaunchEqualsOneLaunchPerMatrix() {
        int experts = 16;
        int rows = 512;
        int cols = 1024;
        Random rnd = new Random(31);
        for (WeightFormat f : new WeightFormat[]{WeightFormat.FP4_BLOCK32, WeightFormat.FP8_BLOCK128}) {
            long wBytes = f.weightBytes(rows, cols);
            long sBytes = f.scaleBytes(rows, cols);
            try (DeviceBuffer w1 = DeviceBuffer.of(randomWeights(f, experts * wBytes, rnd));
                 DeviceBuffer w3 = DeviceBuffer.of(randomWeights(f, experts * wBytes, rnd));
                 DeviceBuffer s1 = DeviceBuffer.of(randomScales(experts * sBytes, rnd));
                 DeviceBuffer s3 = DeviceBuffer.of(randomScales(experts * sBytes, rnd))) {
                DeviceMatrix d1 = DeviceMatrix.ofCheckpointBytes(f, w1.address(), s1.address(), rows, cols, experts);
                DeviceMatrix d3 = DeviceMatrix.ofCheckpointBytes(f, w3.address(), s3.address(), rows, cols, experts);
                assertThat(d1.fmtCode()).isEqualTo(d3.fmtCode());
                for (int[] shape : new int[][]{{1, 1}, {3, 8}, {40, 8}, {90, 64}}) {
                    pairedAgainstSingle(f + " tokens " + shape[0] + " tile " + shape[1], d1, d3, wBytes, sBytes,
                        experts, shape[0], shape[1], rnd);
                }
            }
        }
    }

    private static void pairedAgainstSingle(String what, DeviceMatrix d1, DeviceMatrix d3, long wStride, long sStride,
                                            int experts, int tokens, int tile, Random rnd) {
        int k = 4;
        int rows = d1.rows();
        int cols = d1.cols();
        // k distinct experts per token: expert 0 and k - 1 others, so expert 0 gets more slots than a tile
        int[] count = new int[experts];
        List<int[]> pairs = new ArrayList<>();  // (expert, token)
        for (int t = 0; t < tokens; t++) {
            List<Integer> others = new ArrayList<>();
            for (int e = 1; e < experts; e++) {
                others.add(e);
            }
            Collections.shuffle(others, rnd);
            pairs.add(new int[]{0, t});
            for (int j = 0; j < k - 1; j++) {
                pairs.add(new int[]{others.get(j), t});
            }
        }
        pairs.sort(Comparator.comparingInt(p -> p[0]));
        for (int[] p : pairs) {
            count[p[0]]++;
        }
        int[] offsets = new int[experts + 1];
        int[] tileOffsets = new int[experts + 1];
        for (int e = 0; e < experts; e++) {
            offsets[e + 1] = offsets[e] + count[e];
            tileOffsets[e + 1] = tileOffsets[e] + (count[e] + tile - 1) / tile;
        }
        int[] gather = pairs.stream().mapToInt(p -> p[1]).toArray();
        int slots = gather.length;
        short[] x = new short[tokens * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = Bf16.fromFloat(GpuTest.bf16Random(rnd, 1f));
        }
        try (DeviceBuffer dx = DeviceBuffer.of(x);
             DeviceBuffer off = DeviceBuffer.of(offsets);
             DeviceBuffer toff = DeviceBuffer.of(tileOffsets);
             DeviceBuffer g = DeviceBuffer.of(gather);
             DeviceBuffer y1 = GpuTest.unwritten(2L * slots * rows);
             DeviceBuffer y3 = GpuTest.unwritten(2L * slots * rows);
             DeviceBuffer p1 = GpuTest.unwritten(2L * slots * rows);
             DeviceBuffer p3 = GpuTest.unwritten(2L * slots * rows)) {
            BiConsumer<DeviceMatrix, DeviceBuffer> single = (d, y) -> CudaRuntime.check(
                CudaNative.strata_moe_expert_linear(d.fmtCode(), d.weight(), d.scale(), wStride, sStride, rows, cols,
                    experts, slots, tile, off.address(), toff.address(), g.address(), dx.address(), cols, y.address(),
                    rows, 0), what);
            single.accept(d1, y1);
            single.accept(d3, y3);
            CudaRuntime.check(CudaNative.strata_moe_expert_linear_pair(d1.fmtCode(), d1.weight(), d1.scale(),
                d3.weight(), d3.scale(), wStride, sStride, rows, cols, experts, slots, tile, off.address(),
                toff.address(), g.address(), dx.address(), cols, p1.address(), p3.address(), rows, 0), what);
            short[] a1 = y1.downloadShorts(slots * rows);
            short[] a3 = y3.downloadShorts(slots * rows);
            assertThat(p1.downloadShorts(slots * rows)).as(what + " w1").isEqualTo(a1);
            assertThat(p3.downloadShorts(slots * rows)).as(what + " w3").isEqualTo(a3);
            long nan = 0;
            for (short v : a1) {
                nan += Float.isNaN(Bf16.toFloat(v)) ? 1 : 0;
            }
            assertThat(nan).as(what + ": outputs left unwritten").isZero();
            assertThat(a1).as(what + ": w1 and w3 differ").isNotEqualTo(a3);
            System.out.printf("%-40s %d slots, paired launch identical to single launches%n", what, slots);
        }
    }

    private static byte[] randomWeights(WeightFormat f, long n, Random rnd) {
        byte[] b = new byte[Math.toIntExact(n)];
        rnd.nextBytes(b);
        if (f == WeightFormat.FP8_BLOCK128) {
            for (int i = 0; i < b.length; i++) {
                if ((b[i] & 0x7f) == 0x7f) {
                    b[i]--;  // e4m3 NaN codes
                }
            }
        }
        return b;
    }

    private static byte[] randomScales(long n, Random rnd) {
        byte[] b = new byte[Math.toIntExact(n)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (118 + rnd.nextInt(8));
        }
        return b;
    }

    /** hidden 512, 3 layers (layer 0 hash-routed), 64 experts top-6, moe inter 256. */
    private static final SyntheticCheckpoint.Shape SHAPE =
        new SyntheticCheckpoint.Shape(512, 3, 4, 128, 2, 128, 64, 6, 256, 8, 16, 1024, 1);

    /**
     * Every layer's MoE on the GPU and on the CPU for the first 1, 7 and 300 rows of x: expert ids identical,
     * outputs within 2 bf16 ulps or 1e-3 of the row norm.
     */
    private static void againstCpu(String name, ModelConfig cfg, TensorSet ckpt, float[] x, int[] tokens) {
        CpuModel cpu = new CpuModel(cfg, new CheckpointTensors(ckpt.tensors()));
        int dim = cfg.hiddenSize();
        try (WeightStore store = new WeightStore()) {
            for (int l = 0; l < cfg.numHiddenLayers(); l++) {
                var spec = cfg.schedule().layer(l);
                MoeLayer ref = cpu.blocks().get(l).moe();
                DeviceMoe moe = DeviceMoe.load(store, ckpt, cfg, spec);
                for (int m : BATCHES) {
                    float[] xm = Arrays.copyOf(x, m * dim);
                    int[] tm = Arrays.copyOf(tokens, m);
                    MoeLayer.Routing routing = ref.route(xm, m, tm);
                    float[] expect = new float[m * dim];
                    ref.forward(xm, m, tm, expect);
                    Result r = run(moe, cfg, xm, tm, m);
                    String what = name + " layer " + l + (spec.hashRouted() ? " (hash)" : "") + " m=" + m;
                    assertThat(r.ids).as(what + " expert ids").isEqualTo(routing.experts());
                    double weightErr = 0;
                    for (int i = 0; i < r.weights.length; i++) {
                        weightErr = Math.max(weightErr, Math.abs(r.weights[i] - routing.weights()[i]));
                    }
                    int worstUlps = 0;
                    double worstRel = 0;
                    for (int t = 0; t < m; t++) {
                        double norm = 0;
                        for (int d = 0; d < dim; d++) {
                            norm += (double) expect[t * dim + d] * expect[t * dim + d];
                        }
                        norm = Math.sqrt(norm);
                        for (int d = 0; d < dim; d++) {
                            float g = r.out[t * dim + d];
                            float c = expect[t * dim + d];
                            int ulps = Math.abs(ordered(Bf16.fromFloat(g)) - ordered(Bf16.fromFloat(c)));
                            double rel = Math.abs(g - c) / Math.max(norm, 1e-30);
                            worstUlps = Math.max(worstUlps, ulps);
                            worstRel = Math.max(worstRel, rel);
                            if (ulps > 2) {
                                assertThat(rel).as("%s: token %d channel %d gpu %s cpu %s", what, t, d, g, c)
                                    .isLessThanOrEqualTo(1e-3);
                            }
                        }
                    }
                    System.out.printf("%-36s ids identical, weight error %.1e, worst %d ulps, worst %.2e of row norm%n",
                        what, weightErr, worstUlps, worstRel);
                    assertThat(weightErr).as(what + " routing weights").isLessThan(1e-5);
                }
            }
        }
    }

    private record Result(int[] ids, float[] weights, float[] out) {
    }

    private static Result run(DeviceMoe moe, ModelConfig cfg, float[] x, int[] tokens, int m) {
        int dim = cfg.hiddenSize();
        int k = cfg.moe().numExpertsPerToken();
        short[] xb = new short[m * dim];
        for (int i = 0; i < xb.length; i++) {
            xb[i] = Bf16.fromFloat(x[i]);
        }
        try (DeviceBuffer dx = DeviceBuffer.of(xb);
             DeviceBuffer dt = DeviceBuffer.of(tokens);
             DeviceBuffer ws = DeviceBuffer.allocate(DeviceMoe.workspaceBytes(cfg, m));
             DeviceBuffer out = DeviceBuffer.allocate(2L * m * dim)) {
            moe.forward(dx.address(), dt.address(), m, out.address(), ws.address(), 0);
            // forward leaves its routing where route() puts it: read it back from the workspace
            DeviceMoe.Routing routing = moe.route(dx.address(), dt.address(), m, ws.address(), 0);
            short[] ob = out.downloadShorts(m * dim);
            float[] o = new float[ob.length];
            for (int i = 0; i < o.length; i++) {
                o[i] = Bf16.toFloat(ob[i]);
            }
            int[] ids = new int[m * k];
            float[] w = new float[m * k];
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment host = arena.allocate(8L * m * k, 16);
                CudaRuntime.check(CudaNative.strata_cuda_memcpy(host.address(), routing.ids(), 4L * m * k, 2), "ids");
                CudaRuntime.check(CudaNative.strata_cuda_memcpy(host.address() + 4L * m * k, routing.weights(),
                    4L * m * k, 2), "weights");
                MemorySegment.copy(host, ValueLayout.JAVA_INT, 0, ids, 0, m * k);
                MemorySegment.copy(host, ValueLayout.JAVA_FLOAT, 4L * m * k, w, 0, m * k);
            }
            return new Result(ids, w, o);
        }
    }

    /** The checkpoint with every routed expert re-drawn as FP8 e4m3 with 128x128 ue8m0 scales. */
    private static TensorSet withFp8Experts(TensorSet base, ModelConfig cfg, Arena arena, Random rnd) {
        Map<String, Tensor> map = new LinkedHashMap<>(base.tensors());
        int dim = cfg.hiddenSize();
        int inter = cfg.moe().intermediateSize();
        for (int l = 0; l < cfg.numHiddenLayers(); l++) {
            for (int e = 0; e < cfg.moe().numRoutedExperts(); e++) {
                String p = "layers." + l + ".ffn.experts." + e + ".";
                putFp8(map, p + "w1", inter, dim, arena, rnd);
                putFp8(map, p + "w2", dim, inter, arena, rnd);
                putFp8(map, p + "w3", inter, dim, arena, rnd);
            }
        }
        return new TensorSet() {
            @Override
            public Map<String, Tensor> tensors() {
                return map;
            }

            @Override
            public CheckpointException noSuchTensor(String name) {
                return new CheckpointException("fp8-experts", name, "no such tensor");
            }
        };
    }

    private static void putFp8(Map<String, Tensor> map, String prefix, int out, int in, Arena arena, Random rnd) {
        MemorySegment w = arena.allocate((long) out * in, 16);
        for (long i = 0; i < w.byteSize(); i++) {
            int v = rnd.nextInt(256);
            w.set(ValueLayout.JAVA_BYTE, i, (byte) ((v & 0x7f) == 0x7f ? v - 1 : v));
        }
        int so = (out + 127) / 128;
        int si = (in + 127) / 128;
        MemorySegment s = arena.allocate((long) so * si, 16);
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (116 + rnd.nextInt(3)));
        }
        map.put(prefix + ".weight", new Tensor(prefix + ".weight", DType.F8_E4M3, new int[]{out, in}, w, "test"));
        map.put(prefix + ".scale", new Tensor(prefix + ".scale", DType.F8_E8M0, new int[]{so, si}, s, "test"));
    }

    private static ModelConfig parse(Path dir) {
        try {
            return ModelConfig.parse(dir.resolve("config.json"));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static float[] randomInput(Random rnd, int m, int dim) {
        float[] x = new float[m * dim];
        for (int i = 0; i < x.length; i++) {
            x[i] = GpuTest.bf16Random(rnd, 1f);
        }
        return x;
    }

    private static int[] randomTokens(Random rnd, int m, int vocab) {
        int[] t = new int[m];
        for (int i = 0; i < m; i++) {
            t[i] = rnd.nextInt(vocab);
        }
        return t;
    }

    private static int ordered(short bits) {
        int v = bits & 0xffff;
        return (v & 0x8000) != 0 ? -(v & 0x7fff) : v;
    }
}
