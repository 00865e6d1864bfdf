package io.strata.platform.engine.sampling;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.BiFunction;

/**
 * Per-row cost of a non-greedy draw at the model's vocabulary, {@link Sampler} against {@link ReferenceDraw} (the
 * draw before its shortcuts) in the same run. Off by default; run with
 * {@code ./mvnw -o -q -B -pl platform-app test -Dtest=SamplerBenchmark -Dstrata.bench.sampler=true
 * -Dsurefire.failIfNoSpecifiedTests=false}. Both sides copy the row out of a {@link MemorySegment} first, as the
 * engine does, and every draw's token is checked against the reference's.
 */
@EnabledIfSystemProperty(named = "strata.bench.sampler", matches = "true")
class SamplerBenchmark {
    private static final int VOCAB = 129_280;
    private static final int ROWS = 32;
    private static final int REPEATS = 7;

    private record Setting(String name, SamplingParams params) {
    }

    private record Kind(String name, BiFunction<SplittableRandom, Integer, float[]> rows) {
    }

    @Test
    void perRowCost() {
        List<Setting> settings = List.of(
                new Setting("temperature 1.0", SamplerEquivalenceTest.params(1.0, 1, 0, 0)),
                new Setting("temperature 0.7", SamplerEquivalenceTest.params(0.7, 1, 0, 0)),
                new Setting("T 1.0, top_p 0.95", SamplerEquivalenceTest.params(1.0, 0.95, 0, 0)),
                new Setting("T 1.0, top_k 50", SamplerEquivalenceTest.params(1.0, 1, 50, 0)),
                new Setting("T 0.8, top_k 50, top_p 0.9", SamplerEquivalenceTest.params(0.8, 0.9, 50, 0)),
                new Setting("T 1.0, min_p 0.05", SamplerEquivalenceTest.params(1.0, 1, 0, 0.05)));
        List<Kind> kinds = List.of(
                new Kind("peaked", SamplerEquivalenceTest::peaked),
                new Kind("broad", SamplerEquivalenceTest::broad),
                new Kind("flat", (g, v) -> SamplerEquivalenceTest.gaussian(g, v, 1.0)));
        Sampler sampler = new Sampler(VOCAB);
        ReferenceDraw ref = new ReferenceDraw(VOCAB);
        float[] work = new float[VOCAB];
        warmUp(sampler, settings, kinds);
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "%n| logits | setting | old µs/row (min–max) | new µs/row (min–max) | speed-up | new: rows that weighed every logit / that the definition drew |%n|---|---|---|---|---|---|%n"));
        for (Kind kind : kinds) {
            SplittableRandom g = new SplittableRandom(2026);
            List<MemorySegment> rows = new ArrayList<>();
            for (int i = 0; i < ROWS; i++) {
                rows.add(MemorySegment.ofArray(kind.rows().apply(g, VOCAB)));
            }
            table.append(String.format(Locale.ROOT, "| %s | greedy (unchanged: the copy and an argmax) | | %.1f | | |%n",
                    kind.name(), greedyUs(sampler, rows)));
            for (Setting s : settings) {
                SamplingParams p = s.params();
                TokenHistory none = new TokenHistory(new int[0]);
                double[] oldUs = new double[REPEATS], newUs = new double[REPEATS];
                long exactBefore = 0, definitionBefore = 0, draws = 0;
                for (int rep = -2; rep < REPEATS; rep++) { // two warm-up rounds
                    if (rep == 0) {
                        exactBefore = sampler.exactWeighings();
                        definitionBefore = sampler.definitionDraws();
                        draws = 0;
                    }
                    long seed = 1000L * rep;
                    int[] expected = new int[ROWS];
                    long t0 = System.nanoTime();
                    for (int i = 0; i < ROWS; i++) {
                        MemorySegment.copy(rows.get(i), java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, work, 0, VOCAB);
                        expected[i] = ref.draw(work, p, new SplittableRandom(seed + i));
                    }
                    long t1 = System.nanoTime();
                    int[] got = new int[ROWS];
                    for (int i = 0; i < ROWS; i++) {
                        got[i] = sampler.sample(rows.get(i), 0, p, none, new SplittableRandom(seed + i), -1).token();
                    }
                    long t2 = System.nanoTime();
                    if (!Arrays.equals(expected, got)) {
                        throw new AssertionError(kind.name() + ", " + s.name() + ": tokens differ from the reference");
                    }
                    if (rep >= 0) {
                        oldUs[rep] = (t1 - t0) / 1e3 / ROWS;
                        newUs[rep] = (t2 - t1) / 1e3 / ROWS;
                        draws += ROWS;
                    }
                }
                Arrays.sort(oldUs);
                Arrays.sort(newUs);
                table.append(String.format(Locale.ROOT, "| %s | %s | %.0f (%.0f–%.0f) | %.1f (%.1f–%.1f) | %.1f× | %d / %d of %d |%n",
                        kind.name(), s.name(), oldUs[REPEATS / 2], oldUs[0], oldUs[REPEATS - 1],
                        newUs[REPEATS / 2], newUs[0], newUs[REPEATS - 1], oldUs[REPEATS / 2] / newUs[REPEATS / 2],
                        sampler.exactWeighings() - exactBefore, sampler.definitionDraws() - definitionBefore, draws));
            }
        }
        System.out.println(table);
    }

    /**
     * Every path compiled before anything is timed: each setting over each kind of row, and the definition itself
     * through rows with a NaN logit. (The first rows of a path run before the JIT compiles its vector code and
     * cost milliseconds: a start-up cost, reported apart.)
     */
    private static void warmUp(Sampler sampler, List<Setting> settings, List<Kind> kinds) {
        SplittableRandom g = new SplittableRandom(1);
        for (Kind kind : kinds) {
            float[] row = kind.rows().apply(g, VOCAB);
            float[] withNaN = row.clone();
            withNaN[g.nextInt(VOCAB)] = Float.NaN;
            for (int i = 0; i < 60; i++) {
                for (Setting s : settings) {
                    for (float[] r : List.of(row, withNaN)) {
                        sampler.sample(MemorySegment.ofArray(r), 0, s.params(), new TokenHistory(new int[0]),
                                new SplittableRandom(i), -1);
                    }
                }
            }
        }
    }

    /** The median over {@link #REPEATS} rounds of a greedy pass over the rows. */
    private static double greedyUs(Sampler sampler, List<MemorySegment> rows) {
        double[] us = new double[REPEATS];
        SamplingParams greedy = SamplingParams.greedy(16);
        for (int rep = -2; rep < REPEATS; rep++) {
            long t0 = System.nanoTime();
            for (MemorySegment row : rows) {
                sampler.sample(row, 0, greedy, new TokenHistory(new int[0]), new SplittableRandom(1), -1);
            }
            if (rep >= 0) {
                us[rep] = (System.nanoTime() - t0) / 1e3 / rows.size();
            }
        }
        Arrays.sort(us);
        return us[REPEATS / 2];
    }
}
