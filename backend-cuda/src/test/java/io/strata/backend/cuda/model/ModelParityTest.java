package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.LogitStats;
import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.backend.cpu.CpuBackendProvider;
import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cuda.CudaBackendProvider;
import io.strata.backend.cuda.GpuTest;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole model on the GPU against the CPU backend (which matches DeepSeek's reference), through the
 * executor SPI the engine drives: one-shot and chunked prefill, batched decode, a prefix-cache hit and the
 * recompute of an evicted window tail. On {@code dsv4-tiny-fp8} (the release's number formats, where
 * routing and indexer choices sit on a knife edge) against the reference logits with the fixtures README's
 * criteria; on generated models of V4-Flash and V4-Pro dimensions in the stable construction (BF16, wide
 * routing margins, the indexer keeping every entry) against the CPU with the tight criteria.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.MethodName.class)
class ModelParityTest {
    /** V4-Flash's attention and expert dimensions, 3 layers (window, C4A, C128A), 16 experts. */
    static final SyntheticCheckpoint.Shape FLASH = new SyntheticCheckpoint.Shape(4096, 3, 64, 1024, 8, 1024, 16, 6,
        2048, 64, 512, 4096, 1);
    /** V4-Pro's attention and expert dimensions, 3 layers, 8 experts. */
    static final SyntheticCheckpoint.Shape PRO = new SyntheticCheckpoint.Shape(7168, 3, 128, 1536, 16, 1024, 8, 6,
        3072, 64, 1024, 4096, 1);

    /** A model open on both backends with identical pools. */
    record Pair(ModelConfig config, Checkpoint checkpoint, ModelExecutor cpu, ModelExecutor gpu, KvLayout layout)
        implements AutoCloseable {
        static Pair open(Path dir, String id) throws Exception {
            ModelConfig config = ModelConfig.parse(dir.resolve("config.json"));
            Checkpoint ckpt = Checkpoint.open(dir);
            LoadOptions opts = new LoadOptions(id, 1024, 8, 0);
            ModelExecutor cpu = new CpuBackendProvider().load(config, ckpt, opts);
            ModelExecutor gpu = new CudaBackendProvider().load(config, ckpt, opts);
            KvLayout layout = KvLayout.of(KvModelShape.of(id, config), KvPrecision.DEFAULT);
            cpu.allocateKv(layout, Schedule.POOL);
            gpu.allocateKv(layout, Schedule.POOL);
            return new Pair(config, ckpt, cpu, gpu, layout);
        }

        @Override
        public void close() {
            gpu.close();
            cpu.close();
            checkpoint.close();
        }
    }

    private Pair fp8;
    private SafetensorsFile expected;

    @BeforeAll
    void open() throws Exception {
        GpuTest.assumeGpu();
        Path dir = models().resolve("dsv4-tiny-fp8");
        fp8 = Pair.open(dir, "dsv4-tiny-fp8");
        expected = SafetensorsFile.open(dir.resolve("expected.safetensors"));
    }

    @AfterAll
    void close() {
        if (fp8 != null) {
            fp8.close();
            expected.close();
        }
    }

    static Path models() {
        String p = System.getProperty("strata.models.dir");
        return p != null ? Path.of(p) : Path.of("models");
    }

    private int[] tokens(int seq) {
        return expected.tensor("seq" + seq + ".tokens").toIntArray();
    }

    private float[] reference(int seq) {
        return expected.tensor("seq" + seq + ".logits").toFloatArray();
    }

    private static final int[] PROMPT = {300, 3};

    /** Runs the same schedule on both backends: {@code scenario} builds the requests from a fresh page allocator. */
    private static List<float[]> both(Pair m, Function<PageAllocator, List<Schedule.Request>> scenario,
                                      ModelExecutor exec) {
        List<Schedule.Request> reqs = scenario.apply(new PageAllocator(m.layout(), Schedule.POOL));
        Schedule.run(exec, reqs);
        return reqs.stream().map(r -> r.collected(m.config().vocabSize())).toList();
    }

    private void checkFp8(String what, Function<PageAllocator, List<Schedule.Request>> scenario, int... seqs) {
        int vocab = fp8.config().vocabSize();
        List<float[]> gpu = sequential(fp8, scenario, fp8.gpu());
        List<float[]> cpu = sequential(fp8, scenario, fp8.cpu());
        for (int i = 0; i < seqs.length; i++) {
            LogitStats g = LogitStats.of(gpu.get(i), reference(seqs[i]), vocab);
            LogitStats c = LogitStats.of(cpu.get(i), reference(seqs[i]), vocab);
            LogitStats gc = LogitStats.of(gpu.get(i), cpu.get(i), vocab);
            System.out.printf("dsv4-tiny-fp8 %s seq%d: GPU vs reference %s | CPU vs reference %s | GPU vs CPU %s%n",
                what, seqs[i], g, c, gc);
            assertThat(g.meetsFp8Criteria()).as("GPU vs reference, " + what + ": " + g).isTrue();
            assertThat(gc.meetsFp8Criteria()).as("GPU vs CPU, " + what + ": " + gc).isTrue();
        }
    }

    @Test
    void fixtureOneShotPrefillThenBatchedDecodeMeetsTheFp8Criteria() {
        checkFp8("one-shot prefill, batched decode", pages -> List.of(
            new Schedule.Request(1, tokens(0), PROMPT[0], 1000, pages.tables(tokens(0).length)),
            new Schedule.Request(2, tokens(1), PROMPT[1], 1000, pages.tables(tokens(1).length))), 0, 1);
    }

    @Test
    void fixtureChunkedPrefillOf64MeetsTheFp8Criteria() {
        checkFp8("chunked prefill 64", pages -> List.of(
            new Schedule.Request(3, tokens(0), PROMPT[0], 64, pages.tables(tokens(0).length))), 0);
    }

    @Test
    void fixturePrefixHitAndWindowRecomputeMeetTheFp8Criteria() {
        int hit = 256;
        for (boolean recompute : new boolean[] {false, true}) {
            checkFp8(recompute ? "recompute of the evicted window before 256" : "prefix hit at 256", pages -> {
                int[] t = tokens(0);
                int[][] firstTables = pages.tables(t.length);
                // the first request's prompt fills the pages the second one is handed
                Schedule.Request first = new Schedule.Request(4, java.util.Arrays.copyOf(t, PROMPT[0]), PROMPT[0], 1000,
                    firstTables);
                Schedule.Request second = new Schedule.Request(5, t, PROMPT[0], 1000,
                    pages.sharing(pages.tables(t.length), firstTables, hit, !recompute));
                second.sharedPrefix = hit;
                second.done = recompute ? hit - fp8.config().attention().slidingWindow() : hit;
                second.windowFloor = recompute ? second.done : 0;
                return new SequentialPair(first, second);
            }, 0);
        }
    }

    /** Two requests run one after the other (the second reads what the first wrote); results are the second's. */
    private static final class SequentialPair extends java.util.AbstractList<Schedule.Request> {
        private final Schedule.Request first;
        private final Schedule.Request second;

        SequentialPair(Schedule.Request first, Schedule.Request second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public Schedule.Request get(int i) {
            return second;
        }

        @Override
        public int size() {
            return 1;
        }
    }

    private static List<float[]> sequential(Pair m, Function<PageAllocator, List<Schedule.Request>> scenario,
                                            ModelExecutor exec) {
        List<Schedule.Request> reqs = scenario.apply(new PageAllocator(m.layout(), Schedule.POOL));
        if (reqs instanceof SequentialPair p) {
            Schedule.run(exec, List.of(p.first));
        }
        Schedule.run(exec, reqs);
        return reqs.stream().map(r -> r.collected(m.config().vocabSize())).toList();
    }

    /**
     * Every layer's attention sub-layer alone, from the fixture's recorded input, against the reference's
     * recorded output ({@code io.layers.k.attn.in0/out0}: the 300-token prefill of sequence 0 from empty caches).
     */
    @Test
    void fixtureAttentionModulesMatchTheReference() {
        int dim = fp8.config().hiddenSize();
        int n = 300;
        int[] tokens = java.util.Arrays.copyOf(tokens(0), n);
        for (int l = 0; l < fp8.config().numHiddenLayers(); l++) {
            PageAllocator pages = new PageAllocator(fp8.layout(), Schedule.POOL);
            var batch = new io.strata.spi.exec.StepBatch(List.of(new io.strata.spi.exec.SequenceChunk(100 + l, tokens, 0,
                io.strata.spi.exec.BlockTable.fromZero(pages.tables(n)), 0, 0, new int[0])));
            short[] in = bf16Bits(expected.tensor("io.layers." + l + ".attn.in0").toFloatArray());
            float[] ref = expected.tensor("io.layers." + l + ".attn.out0").toFloatArray();
            short[] out = ((CudaExecutor) fp8.gpu()).attentionOnly(l, batch, in);
            float[] got = new float[out.length];
            for (int i = 0; i < out.length; i++) {
                got[i] = io.strata.model.format.Bf16.toFloat(out[i]);
            }
            double worst = 0;
            for (int t = 0; t < n; t++) {
                worst = Math.max(worst, GpuTest.rowError(got, ref, t, dim));
            }
            double total = GpuTest.relativeError(got, ref);
            System.out.printf("dsv4-tiny-fp8 layer %d attention vs reference: %.2e relative (worst row %.2e)%n", l,
                total, worst);
            assertThat(total).as("layer " + l + " attention").isLessThan(2e-2);
        }
    }

    private static short[] bf16Bits(float[] v) {
        short[] out = new short[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (short) io.strata.model.format.Bf16.fromFloat(v[i]);
        }
        return out;
    }

    @Test
    void flashShapedStableModelMatchesTheCpu(@TempDir Path dir) throws Exception {
        stableShape(FLASH, dir, "flash-shaped");
    }

    @Test
    void proShapedStableModelMatchesTheCpu(@TempDir Path dir) throws Exception {
        stableShape(PRO, dir, "pro-shaped");
    }

    /** Two requests (600-token prompt in chunks of 256, 40-token prompt), 40 decode steps batched, then a prefix hit. */
    private void stableShape(SyntheticCheckpoint.Shape shape, Path dir, String id) throws Exception {
        SyntheticCheckpoint.writeStable(shape, dir);
        Files.copy(models().resolve("dsv4-tiny-fp8").resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        Random rnd = new Random(7);
        int[] a = rnd.ints(640, 2, shape.vocab()).toArray();
        int[] b = rnd.ints(80, 2, shape.vocab()).toArray();
        try (Pair m = Pair.open(dir, id)) {
            Function<PageAllocator, List<Schedule.Request>> batched = pages -> List.of(
                new Schedule.Request(1, a, 600, 256, pages.tables(a.length)),
                new Schedule.Request(2, b, 40, 256, pages.tables(b.length)));
            List<float[]> gpu = both(m, batched, m.gpu());
            List<float[]> cpu = both(m, batched, m.cpu());
            for (int i = 0; i < 2; i++) {
                LogitStats s = LogitStats.of(gpu.get(i), cpu.get(i), shape.vocab());
                System.out.printf("%s request %d (chunked prefill, batched decode): GPU vs CPU %s%n", id, i + 1, s);
                assertThat(s.meetsGeneratedStableCriteria()).as(id + " request " + (i + 1) + ": " + s).isTrue();
            }
            int hit = 512;
            Function<PageAllocator, List<Schedule.Request>> prefix = pages -> {
                int[][] firstTables = pages.tables(a.length);
                Schedule.Request first = new Schedule.Request(3, java.util.Arrays.copyOf(a, 600), 600, 600, firstTables);
                Schedule.Request second = new Schedule.Request(4, a, 600, 256,
                    pages.sharing(pages.tables(a.length), firstTables, hit, true));
                second.sharedPrefix = hit;
                second.done = hit;
                return new SequentialPair(first, second);
            };
            float[] gpuHit = sequential(m, prefix, m.gpu()).getFirst();
            float[] cpuHit = sequential(m, prefix, m.cpu()).getFirst();
            LogitStats s = LogitStats.of(gpuHit, cpuHit, shape.vocab());
            System.out.printf("%s prefix hit at 512: GPU vs CPU %s%n", id, s);
            assertThat(s.meetsGeneratedStableCriteria()).as(id + " prefix hit: " + s).isTrue();
            LogitStats self = LogitStats.of(gpuHit, gpu.getFirst(), shape.vocab());
            System.out.printf("%s prefix hit vs computed from scratch (GPU): %s%n", id, self);
            assertThat(self.meetsStableCriteria()).as(id + " prefix hit vs from scratch: " + self).isTrue();
        }
    }
}
