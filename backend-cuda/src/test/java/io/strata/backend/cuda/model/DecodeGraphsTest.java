package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.LogitStats;
import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cuda.GpuTest;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.GraphCapture;
import io.strata.spi.exec.LoadOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The side stream and the decode graphs change when work runs, not what it computes: the same schedule
 * (five requests prefilled together, then decoding together across compression, page and C128A
 * boundaries, so captured steps carry three padding rows) gives the same logits on one stream, on two,
 * and replayed through graphs, and the graphs really serve the decode steps.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DecodeGraphsTest {
    private static final int[] PROMPTS = {300, 41, 100, 240, 7};
    private static final int DECODE = 40;

    private Path dir;
    private Checkpoint ckpt;
    private ModelConfig config;
    private CudaExecutor gpu;
    private KvLayout layout;
    private List<int[]> tokens;

    @BeforeAll
    void load() throws Exception {
        GpuTest.assumeGpu();
        dir = java.nio.file.Files.createTempDirectory("decode-graphs");
        SyntheticCheckpoint.writeStable(SyntheticCheckpoint.TINY, dir);
        config = ModelConfig.parse(dir.resolve("config.json"));
        ckpt = Checkpoint.open(dir);
        gpu = CudaExecutor.load(config, ckpt, new LoadOptions("tiny", 1024, 8, 0, Map.of("streams", "1",
            "cuda-graphs", "false", "graph-max-context", "2048")), 1024, 8);
        layout = KvLayout.of(KvModelShape.of("tiny", config), KvPrecision.DEFAULT);
        SplittableRandom rnd = new SplittableRandom(5);
        tokens = new ArrayList<>();
        for (int p : PROMPTS) {
            tokens.add(rnd.ints(p + DECODE, 2, config.vocabSize()).toArray());
        }
    }

    @AfterAll
    void close() {
        if (gpu != null) {
            gpu.close();
            ckpt.close();
        }
    }

    /** Fresh pools, the given streams and graphs, the whole schedule: each request's logits rows. */
    private List<float[]> run(int streams, boolean graphs) {
        return runRequests(streams, graphs, java.util.Set.of()).stream().map(r -> r.collected(config.vocabSize()))
            .toList();
    }

    /** The same, the requests of {@code greedy} (ids) asking for their decode rows' argmax only. */
    private List<Schedule.Request> runRequests(int streams, boolean graphs, java.util.Set<Integer> greedy) {
        gpu.reconfigure(streams, graphs);
        gpu.allocateKv(layout, Schedule.POOL);
        PageAllocator pages = new PageAllocator(layout, Schedule.POOL);
        List<Schedule.Request> reqs = new ArrayList<>();
        for (int i = 0; i < PROMPTS.length; i++) {
            reqs.add(new Schedule.Request(i + 1, tokens.get(i), PROMPTS[i], 1024, pages.tables(tokens.get(i).length)));
            reqs.getLast().argmaxOnly = greedy.contains(i + 1);
        }
        Schedule.run(gpu, reqs);
        return reqs;
    }

    private void assertSame(String what, List<float[]> ours, List<float[]> base) {
        int vocab = config.vocabSize();
        for (int i = 0; i < base.size(); i++) {
            LogitStats s = LogitStats.of(ours.get(i), base.get(i), vocab);
            double worst = 0;
            for (int row = 0; row < base.get(i).length / vocab; row++) {
                worst = Math.max(worst, GpuTest.rowError(ours.get(i), base.get(i), row, vocab));
            }
            System.out.printf("%s, request %d: worst row error %.2e, %s%n", what, i + 1, worst, s);
            assertThat(worst).as(what + ", request " + (i + 1)).isLessThanOrEqualTo(1e-3);
            assertThat(s.argmaxAgreement()).as(what + ", request " + (i + 1)).isEqualTo(1.0);
        }
    }

    @Test
    void twoStreamsAndGraphsGiveTheLogitsOfOneStream() {
        List<float[]> eager = run(1, false);
        assertThat(gpu.graphReplays()).isZero();

        assertSame("two streams, eager", run(2, false), eager);

        List<float[]> graphs = run(2, true);
        GraphCapture cap = gpu.graphCapture();
        System.out.printf("captured %d graphs in %d ms (%d MiB)%n", cap.graphs(), cap.captureMillis(), cap.bytes() >> 20);
        // ladder 1, 2, 4, 8 at contexts 2048: every decode step of the five requests replays the batch-8 graph
        assertThat(cap.graphs()).isEqualTo(4);
        assertThat(cap.stopped()).isNull();
        assertThat(gpu.graphReplays()).isEqualTo(DECODE);
        assertSame("two streams, graphs", graphs, eager);

        assertSame("one stream, graphs", run(1, true), eager);
    }

    @Test
    void greedyRowsComeBackAsTheArgmaxOfTheRowsTheyReplace() {
        List<float[]> whole = run(1, false);
        int vocab = config.vocabSize();
        // requests 2 and 4 greedy: their rows sit between whole ones, so the whole rows are copied in several runs
        for (int[] variant : new int[][] {{1, 0}, {2, 0}, {2, 1}}) {
            String what = (variant[0] == 1 ? "one stream" : "two streams") + (variant[1] == 1 ? ", graphs" : ", eager");
            long replays = gpu.graphReplays();
            List<Schedule.Request> reqs = runRequests(variant[0], variant[1] == 1, java.util.Set.of(2, 4));
            assertThat(gpu.graphReplays() - replays).as(what + ": replays").isEqualTo(variant[1] == 1 ? DECODE : 0);
            for (int i = 0; i < reqs.size(); i++) {
                Schedule.Request r = reqs.get(i);
                if (r.argmaxOnly) {
                    // the prompt's last row came back whole, every decode row as its token
                    assertThat(r.logits).as(what + ", request " + r.id).hasSize(1);
                    assertThat(r.argmax).as(what + ", request " + r.id).hasSize(DECODE);
                    float[] rows = whole.get(i);
                    for (int j = 0; j < DECODE; j++) {
                        int expected = io.strata.spi.exec.StepResult.argmax(java.lang.foreign.MemorySegment.ofArray(rows),
                            (long) (j + 1) * vocab, vocab);
                        assertThat(r.argmax.get(j)).as(what + ", request " + r.id + ", decode row " + j)
                            .isEqualTo(expected);
                    }
                } else {
                    assertThat(r.argmax).isEmpty();
                    assertSame(what + ", whole rows beside greedy ones (request " + r.id + ")", List.of(r.collected(vocab)), List.of(whole.get(i)));
                }
            }
        }
    }
}
