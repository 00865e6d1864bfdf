package io.strata.platform.engine.sampling;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BatchSamplerTest {
    private static final int VOCAB = 8192;
    private static final int EOS = 1;

    /** One choice as the engine keeps it: its parameters, history and generator. */
    private record Choice(SamplingParams params, TokenHistory history, SplittableRandom rng) {
    }

    /** Eight kinds of request, cycled over the rows: every branch of the sampler. */
    private static SamplingParams paramsOf(int row) {
        long seed = 1000 + row;
        return switch (row % 8) {
            case 0 -> SamplingParams.greedy(100);
            case 1 -> SamplingParams.builder().temperature(0.8).seed(seed).build();
            case 2 -> SamplingParams.builder().temperature(1.0).topK(40).seed(seed).build();
            case 3 -> SamplingParams.builder().temperature(0.7).topP(0.9).seed(seed).logprobs(0).build();
            case 4 -> SamplingParams.builder().temperature(1.3).topK(200).topP(0.8).minP(0.02).seed(seed).build();
            case 5 -> SamplingParams.builder().temperature(0.9).presencePenalty(0.5).frequencyPenalty(0.4)
                    .repetitionPenalty(1.3).seed(seed).logprobs(3).build();
            case 6 -> SamplingParams.builder().temperature(1.0).minTokens(4).stopTokenIds(Set.of(7, 9)).seed(seed)
                    .logprobs(5).build();
            default -> SamplingParams.builder().temperature(0).repetitionPenalty(1.5).logprobs(2).build();
        };
    }

    /** The same choices every call: the parallel and the sequential runs each get their own copies. */
    private static List<Choice> choices(int rows) {
        List<Choice> out = new ArrayList<>(rows);
        for (int r = 0; r < rows; r++) {
            SplittableRandom prompt = new SplittableRandom(r);
            TokenHistory history = new TokenHistory(prompt.ints(20, 0, VOCAB).toArray());
            for (int g = 0; g < r % 5; g++) {
                history.addGenerated(prompt.nextInt(VOCAB));
            }
            // a seeded choice's generator starts from its seed, another one from the seed the engine drew for it
            SamplingParams params = paramsOf(r);
            out.add(new Choice(params, history, new SplittableRandom(params.seed() != null ? params.seed() : 5000 + r)));
        }
        return out;
    }

    /** Random logits with a few strong favourites per row, so top-k/top-p cut somewhere interesting. */
    private static float[] logits(int rows, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] v = new float[rows * VOCAB];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (rnd.nextGaussian() * 2);
        }
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < 5; k++) {
                v[r * VOCAB + rnd.nextInt(VOCAB)] += 8f;
            }
        }
        return v;
    }

    private static List<BatchSampler.Row> rowsOf(List<Choice> choices) {
        List<BatchSampler.Row> rows = new ArrayList<>(choices.size());
        for (int r = 0; r < choices.size(); r++) {
            Choice c = choices.get(r);
            rows.add(new BatchSampler.Row((long) r * VOCAB, c.params(), c.history(), c.rng()));
        }
        return rows;
    }

    private static void assertSameToken(SampledToken actual, SampledToken expected, String what) {
        assertThat(actual.token()).as(what + " token").isEqualTo(expected.token());
        assertThat(Float.floatToRawIntBits(actual.logprob())).as(what + " logprob")
                .isEqualTo(Float.floatToRawIntBits(expected.logprob()));
        assertThat(actual.rank()).as(what + " rank").isEqualTo(expected.rank());
        assertThat(actual.top().tokens()).as(what + " top tokens").isEqualTo(expected.top().tokens());
        assertThat(actual.top().logprobs()).as(what + " top logprobs").isEqualTo(expected.top().logprobs());
    }

    @Test
    void manyRowsOnFourThreadsGiveExactlyWhatOneSamplerGivesRowAfterRow() {
        int rows = 64;
        List<Choice> parallel = choices(rows);
        List<Choice> sequential = choices(rows);
        Sampler reference = new Sampler(VOCAB);
        try (BatchSampler batch = new BatchSampler(VOCAB, 4, 16, "strata-sampler-test-")) {
            // several steps, each token appended as the engine would, so penalties and generators move on
            for (int step = 0; step < 6; step++) {
                MemorySegment l = MemorySegment.ofArray(logits(rows, step));
                SampledToken[] got = batch.sample(l, rowsOf(parallel), EOS);
                assertThat(got).hasSize(rows);
                for (int r = 0; r < rows; r++) {
                    Choice c = sequential.get(r);
                    SampledToken want = reference.sample(l, (long) r * VOCAB, c.params(), c.history(), c.rng(), EOS);
                    assertSameToken(got[r], want, "step " + step + " row " + r);
                    c.history().addGenerated(want.token());
                    parallel.get(r).history().addGenerated(got[r].token());
                }
            }
            assertThat(batch.parallelBatches()).isEqualTo(6);
        }
        for (int r = 0; r < rows; r++) {
            // the generators were advanced exactly as far as the sequential ones
            assertThat(parallel.get(r).rng().nextLong()).as("rng of row " + r).isEqualTo(sequential.get(r).rng().nextLong());
        }
    }

    @Test
    void theHelpersSampleAtTheSameTimeAsTheCaller() {
        // each draw waits until three threads are drawing: it returns only if two helpers run beside the caller
        CountDownLatch three = new CountDownLatch(3);
        Set<Thread> drawing = ConcurrentHashMap.newKeySet();
        RandomGenerator meeting = () -> {
            if (drawing.add(Thread.currentThread())) {
                three.countDown();
            }
            try {
                if (!three.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("only " + drawing.size() + " threads sampled at once");
                }
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return 42L;
        };
        int rows = 16;
        List<BatchSampler.Row> batch = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            batch.add(new BatchSampler.Row((long) r * VOCAB, SamplingParams.builder().temperature(1).build(),
                    new TokenHistory(new int[0]), meeting));
        }
        try (BatchSampler sampler = new BatchSampler(VOCAB, 3, 16, "strata-sampler-test-")) {
            assertThat(sampler.sample(MemorySegment.ofArray(logits(rows, 1)), batch, EOS)).doesNotContainNull();
        }
        assertThat(drawing).hasSize(3).contains(Thread.currentThread());
        assertThat(drawing).filteredOn(t -> t != Thread.currentThread())
                .allSatisfy(t -> {
                    assertThat(t.getName()).matches("strata-sampler-test-[12]");
                    assertThat(t.isDaemon()).isTrue();
                });
    }

    @Test
    void fewRowsAConfinedSegmentOrOneThreadStayOnTheCaller() {
        int rows = 32;
        float[] values = logits(rows, 3);
        Sampler reference = new Sampler(VOCAB);
        List<Choice> expected = choices(rows);
        SampledToken[] want = new SampledToken[rows];
        for (int r = 0; r < rows; r++) {
            Choice c = expected.get(r);
            want[r] = reference.sample(MemorySegment.ofArray(values), (long) r * VOCAB, c.params(), c.history(), c.rng(), EOS);
        }
        MemorySegment heap = MemorySegment.ofArray(values);
        try (BatchSampler below = new BatchSampler(VOCAB, 4, 33, "strata-sampler-test-");
             BatchSampler single = new BatchSampler(VOCAB, 1, 1, "strata-sampler-test-");
             BatchSampler four = new BatchSampler(VOCAB, 4, 16, "strata-sampler-test-");
             Arena arena = Arena.ofConfined()) {
            assertSampledOnTheCaller(below, heap, want);
            assertSampledOnTheCaller(single, heap, want);
            // only its owner may read a confined segment, so its rows must not reach the helpers
            MemorySegment confined = arena.allocate(4L * values.length, 4);
            MemorySegment.copy(heap, 0, confined, 0, confined.byteSize());
            assertSampledOnTheCaller(four, confined, want);
        }
    }

    private static void assertSampledOnTheCaller(BatchSampler sampler, MemorySegment logits, SampledToken[] want) {
        SampledToken[] got = sampler.sample(logits, rowsOf(choices(want.length)), EOS);
        for (int r = 0; r < want.length; r++) {
            assertSameToken(got[r], want[r], "row " + r);
        }
        assertThat(sampler.parallelBatches()).isZero();
    }

    @Test
    void aFailingRowThrowsWhatTheSequentialPathThrowsAfterEveryHelperStopped() {
        int rows = 48;
        List<BatchSampler.Row> batch = rowsOf(choices(rows));
        // rows 10 and 40 fail; one after the other, row 10's failure is the one that surfaces
        for (int failing : new int[]{10, 40}) {
            int row = failing;
            RandomGenerator broken = () -> {
                throw new IllegalStateException("generator of row " + row + " broke");
            };
            batch.set(row, new BatchSampler.Row((long) row * VOCAB, SamplingParams.builder().temperature(1).build(),
                    new TokenHistory(new int[0]), broken));
        }
        MemorySegment l = MemorySegment.ofArray(logits(rows, 4));
        try (BatchSampler sequential = new BatchSampler(VOCAB, 1, "strata-sampler-test-");
             BatchSampler parallel = new BatchSampler(VOCAB, 4, 16, "strata-sampler-test-")) {
            assertThatThrownBy(() -> sequential.sample(l, batch, EOS))
                    .isInstanceOf(IllegalStateException.class).hasMessage("generator of row 10 broke");
            assertThatThrownBy(() -> parallel.sample(l, batch, EOS))
                    .isInstanceOf(IllegalStateException.class).hasMessage("generator of row 10 broke");
            assertThat(parallel.parallelBatches()).isEqualTo(1);
            // the pool is still serving after a failed batch
            assertThat(parallel.sample(l, rowsOf(choices(rows)), EOS)).doesNotContainNull();
        }
    }

    @Test
    void aClosedSamplerSamplesOnTheCaller() {
        int rows = 20;
        BatchSampler sampler = new BatchSampler(VOCAB, 4, 16, "strata-sampler-test-");
        sampler.close();
        SampledToken[] got = sampler.sample(MemorySegment.ofArray(logits(rows, 5)), rowsOf(choices(rows)), EOS);
        assertThat(got).hasSize(rows).doesNotContainNull();
        assertThat(sampler.parallelBatches()).isZero();
    }

    @Test
    void atLeastOneThread() {
        assertThatThrownBy(() -> new BatchSampler(VOCAB, 0, "x-")).isInstanceOf(IllegalArgumentException.class);
    }
}
