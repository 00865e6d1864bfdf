package io.strata.backend.cpu.ep;

import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cpu.model.MoeLayer;
import io.strata.backend.cpu.weights.CheckpointTensors;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;
import io.strata.model.format.Bf16;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Expert-parallel MoE on fake ranks (threads) against the single-rank {@link MoeLayer}: the output must be the
 * same bits for every rank count, every split of the tokens over the ranks (ranks without tokens included),
 * score-routed and hash-routed layers, FP4, FP8-free BF16 experts, and uneven expert ranges.
 */
class ExpertParallelMoeTest {

    private static Path fixture(String name) {
        return Path.of(System.getProperty("strata.models.dir"), name);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void fixtureFp4ExpertsAreBitIdenticalOnEveryLayer(int ranks) throws Exception {
        Path dir = fixture("dsv4-tiny-fp8");
        ModelConfig cfg = ModelConfig.parse(dir.resolve("config.json"));
        try (Checkpoint ckpt = Checkpoint.open(dir);
             SafetensorsFile expected = SafetensorsFile.open(dir.resolve("expected.safetensors"))) {
            var full = new CheckpointTensors(ckpt.tensors());
            for (LayerSpec spec : cfg.schedule().layers()) {
                float[] x;
                int[] tokens;
                String in = "io.layers." + spec.index() + ".ffn.in0";
                if (!spec.mtp() && expected.tensors().containsKey(in)) {
                    x = expected.tensor(in).toFloatArray();
                    tokens = expected.tensor("io.layers." + spec.index() + ".ffn.in1").toIntArray();
                } else {
                    tokens = randomTokens(300, cfg.vocabSize(), spec.index());
                    x = randomRows(300, cfg.hiddenSize(), spec.index());
                }
                int n = tokens.length;
                float[] want = new float[n * cfg.hiddenSize()];
                new MoeLayer(full, cfg, spec).forward(x, n, tokens, want);
                for (int[] split : splits(n, ranks)) {
                    float[] got = runExpertParallel(dir, cfg, spec, ranks, split, x, tokens);
                    assertBits(got, want, "layer " + spec.index() + (spec.hashRouted() ? " (hash)" : "")
                        + ", " + ranks + " ranks, tokens per rank " + java.util.Arrays.toString(split));
                }
            }
        }
    }

    @Test
    void fixtureDecodeBatchesSmallerThanTheGroup() throws Exception {
        Path dir = fixture("dsv4-tiny-fp8");
        ModelConfig cfg = ModelConfig.parse(dir.resolve("config.json"));
        try (Checkpoint ckpt = Checkpoint.open(dir)) {
            var full = new CheckpointTensors(ckpt.tensors());
            for (LayerSpec spec : List.of(cfg.schedule().layer(0), cfg.schedule().layer(3))) {
                for (int n = 1; n <= 3; n++) {
                    int[] tokens = randomTokens(n, cfg.vocabSize(), 7 * n);
                    float[] x = randomRows(n, cfg.hiddenSize(), 11 * n);
                    float[] want = new float[n * cfg.hiddenSize()];
                    new MoeLayer(full, cfg, spec).forward(x, n, tokens, want);
                    int[] split = new int[4];
                    split[3] = n; // ranks 0–2 have nothing this step but still take part
                    assertBits(runExpertParallel(dir, cfg, spec, 4, split, x, tokens), want, "decode n=" + n);
                    int[] spread = new int[4];
                    for (int t = 0; t < n; t++) {
                        spread[t]++;
                    }
                    assertBits(runExpertParallel(dir, cfg, spec, 4, spread, x, tokens), want, "spread n=" + n);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void generatedCheckpointsWithUnevenExpertRanges(int ranks, @TempDir Path tmp) throws Exception {
        // 8 experts top-2 (3 ranks: 2+3+3), 10 experts top-3 (3 ranks: 3+3+4, 4 ranks: 2+3+2+3), FP4 and BF16
        var eight = SyntheticCheckpoint.TINY;
        var ten = new SyntheticCheckpoint.Shape(256, 3, 4, 128, 2, 128, 10, 3, 128, 8, 16, 1024, 1);
        Path a = tmp.resolve("fp4-8");
        Path b = tmp.resolve("fp4-10");
        Path c = tmp.resolve("bf16-10");
        SyntheticCheckpoint.write(eight, a);
        SyntheticCheckpoint.write(ten, b);
        SyntheticCheckpoint.writeStable(ten, c);
        for (Path dir : List.of(a, b, c)) {
            ModelConfig cfg = ModelConfig.parse(dir.resolve("config.json"));
            try (Checkpoint ckpt = Checkpoint.open(dir)) {
                var full = new CheckpointTensors(ckpt.tensors());
                for (LayerSpec spec : cfg.schedule().layers()) {
                    int n = 37;
                    int[] tokens = randomTokens(n, cfg.vocabSize(), spec.index() + 100);
                    float[] x = randomRows(n, cfg.hiddenSize(), spec.index() + 200);
                    float[] want = new float[n * cfg.hiddenSize()];
                    new MoeLayer(full, cfg, spec).forward(x, n, tokens, want);
                    for (int[] split : splits(n, ranks)) {
                        assertBits(runExpertParallel(dir, cfg, spec, ranks, split, x, tokens), want,
                            dir.getFileName() + " layer " + spec.index() + (spec.hashRouted() ? " (hash)" : "")
                                + ", " + ranks + " ranks, split " + java.util.Arrays.toString(split));
                    }
                }
            }
        }
    }

    /**
     * The whole-layer tests above cannot see the summation order: expert outputs are bf16, and a few bf16 values
     * usually add exactly in fp32 whatever the order. Here the order shows: 2^24 + 1 + 1 is 2^24 from the left
     * and 2^24 + 2 from the right, and a shared-expert value of −2^24 keeps the difference through the bf16
     * rounding. Picks come in as (expert 7 on rank 1, expert 0 on rank 0, expert 3 on rank 0).
     */
    @Test
    void combineAddsInExpertIndexOrderWhateverThePickOrder() {
        int[] ids = {7, 0, 3};
        int[] dest = {1, 0, 0};
        int[] slot = {0, 0, 1};
        float[][] back = {{(float) (1 << 24), 1f}, {1f}};
        float[] out = new float[1];
        float shared = -(float) (1 << 24);
        ExpertParallelMoe.combine(ids, 3, dest, slot, back, new float[]{shared}, 1, 1, out);
        // MoeLayer's loop: experts 0, 3, 7 from zero, then the shared expert
        float y = 0f;
        for (float v : new float[]{1 << 24, 1f, 1f}) {
            y += v;
        }
        assertThat(Bf16.round(y + shared)).isEqualTo(0f);
        assertThat(Bf16.round(((1f + 1f) + (1 << 24)) + shared)).isEqualTo(2f); // the other order
        assertThat(Float.floatToRawIntBits(out[0])).isEqualTo(Float.floatToRawIntBits(Bf16.round(y + shared)));
    }

    /** Runs one MoE step on {@code ranks} threads, rank r taking the next {@code split[r]} tokens; gathers the rows. */
    static float[] runExpertParallel(Path dir, ModelConfig cfg, LayerSpec spec, int ranks, int[] split, float[] x,
                                     int[] tokens) throws Exception {
        int dim = cfg.hiddenSize();
        var placement = new ExpertPlacement(cfg.moe().numRoutedExperts(), ranks);
        LocalCollective[] comms = LocalCollective.group(ranks, 60);
        List<ShardedExpertSource> sources = new ArrayList<>();
        float[] out = new float[tokens.length * dim];
        ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try {
            List<Future<?>> done = new ArrayList<>();
            int start = 0;
            for (int r = 0; r < ranks; r++) {
                ShardedExpertSource src = ShardedExpertSource.open(dir, placement, r);
                sources.add(src);
                var moe = new ExpertParallelMoe(src, cfg, spec, placement, comms[r]);
                int from = start;
                int n = split[r];
                start += n;
                done.add(pool.submit(() -> {
                    float[] xr = java.util.Arrays.copyOfRange(x, from * dim, (from + n) * dim);
                    int[] tr = java.util.Arrays.copyOfRange(tokens, from, from + n);
                    float[] yr = new float[n * dim];
                    moe.forward(xr, n, tr, yr);
                    System.arraycopy(yr, 0, out, from * dim, n * dim);
                    return null;
                }));
            }
            assertThat(start).isEqualTo(tokens.length);
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            sources.forEach(ShardedExpertSource::close);
        }
        return out;
    }

    /** An even split, a skewed one, and (for more than one rank) one where rank 0 has no tokens. */
    static List<int[]> splits(int n, int ranks) {
        List<int[]> out = new ArrayList<>();
        int[] even = new int[ranks];
        for (int r = 0; r < ranks; r++) {
            even[r] = (int) ((long) n * (r + 1) / ranks - (long) n * r / ranks);
        }
        out.add(even);
        if (ranks > 1) {
            int[] skew = new int[ranks];
            int left = n;
            for (int r = 0; r < ranks - 1; r++) {
                skew[r] = Math.min(left, (r + 1) * n / (ranks * ranks + 1));
                left -= skew[r];
            }
            skew[ranks - 1] = left;
            out.add(skew);
            int[] idle = even.clone();
            idle[1] += idle[0];
            idle[0] = 0;
            out.add(idle);
        }
        return out;
    }

    static void assertBits(float[] got, float[] want, String what) {
        assertThat(got.length).isEqualTo(want.length);
        for (int i = 0; i < want.length; i++) {
            if (Float.floatToRawIntBits(got[i]) != Float.floatToRawIntBits(want[i])) {
                throw new AssertionError(what + ": element " + i + " is " + got[i] + ", MoeLayer gives " + want[i]);
            }
        }
    }

    static int[] randomTokens(int n, int vocab, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = rnd.nextInt(vocab);
        }
        return t;
    }

    static float[] randomRows(int n, int dim, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed ^ 0x5eed);
        float[] x = new float[n * dim];
        for (int i = 0; i < x.length; i++) {
            x[i] = Bf16.round((float) rnd.nextGaussian());
        }
        return x;
    }
}
