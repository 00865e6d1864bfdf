package io.strata.platform.engine.sampling;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class SamplerTest {

    private static SamplingParams params(double temperature, double topP, int topK, double minP, Long seed) {
        return SamplingParams.builder().temperature(temperature).topP(topP).topK(topK).minP(minP).seed(seed).build();
    }

    private static MemorySegment logits(float... v) {
        return MemorySegment.ofArray(v);
    }

    @Test
    void greedyPicksTheArgmaxAtAnyOffset() {
        Sampler s = new Sampler(4);
        MemorySegment batch = logits(9, 9, 9, 9, 0.1f, 2.5f, -1f, 2.4f);
        SampledToken t = s.sample(batch, 4, SamplingParams.greedy(4), new TokenHistory(new int[0]), new SplittableRandom(1), -1);
        assertThat(t.token()).isEqualTo(1);
        assertThat(t.hasLogprob()).isFalse();
    }

    @Test
    void aPlainGreedyRowsTokenIsTheSpiArgmaxSoABackendMayTakeIt() {
        float nan = Float.NaN;
        float ninf = Float.NEGATIVE_INFINITY;
        List<float[]> rows = new java.util.ArrayList<>(List.of(new float[]{1, 3, 2, 3}, new float[]{-0f, 0f, -1f, -2f},
            new float[]{1, nan, 2, nan}, new float[]{nan, 5, 7, 1}, new float[]{ninf, ninf, ninf, ninf},
            new float[]{ninf, nan, -3e38f, Float.POSITIVE_INFINITY}));
        SplittableRandom rnd = new SplittableRandom(5);
        for (int i = 0; i < 200; i++) {
            float[] r = new float[4];
            for (int j = 0; j < 4; j++) {
                // few distinct values, so ties are common
                r[j] = rnd.nextInt(8) == 0 ? nan : rnd.nextInt(-2, 3) * 0.5f;
            }
            rows.add(r);
        }
        Sampler s = new Sampler(4);
        TokenHistory history = new TokenHistory(new int[0]);
        for (float[] r : rows) {
            MemorySegment seg = logits(r);
            assertThat(s.sample(seg, 0, SamplingParams.greedy(4), history, new SplittableRandom(1), -1).token())
                .as("row %s", java.util.Arrays.toString(r))
                .isEqualTo(io.strata.spi.exec.StepResult.argmax(seg, 0, 4));
        }
    }

    @Test
    void onlyAGreedyRowWithNothingAppliedOrReportedIsPlainArgmax() {
        TokenHistory fresh = new TokenHistory(new int[]{1, 2});
        assertThat(Sampler.isPlainArgmax(SamplingParams.greedy(4), fresh)).isTrue();
        assertThat(Sampler.isPlainArgmax(params(0.7, 1, 0, 0, 1L), fresh)).as("temperature").isFalse();
        assertThat(Sampler.isPlainArgmax(SamplingParams.greedy(4).toBuilder().logprobs(0).build(), fresh))
            .as("logprobs").isFalse();
        assertThat(Sampler.isPlainArgmax(SamplingParams.greedy(4).toBuilder().presencePenalty(0.5).build(), fresh))
            .as("penalty").isFalse();
        SamplingParams minTokens = SamplingParams.greedy(4).toBuilder().minTokens(1).build();
        assertThat(Sampler.isPlainArgmax(minTokens, fresh)).as("EOS suppressed below min_tokens").isFalse();
        fresh.addGenerated(3);
        assertThat(Sampler.isPlainArgmax(minTokens, fresh)).as("min_tokens reached").isTrue();
    }

    @Test
    void sameSeedSameTokensDifferentSeedDifferentSequence() {
        Sampler s = new Sampler(50);
        float[] v = new float[50];
        for (int i = 0; i < 50; i++) {
            v[i] = (float) Math.sin(i) * 2;
        }
        MemorySegment l = logits(v);
        int[] a = drawMany(s, l, params(1.0, 1, 0, 0, 7L), 7);
        int[] b = drawMany(s, l, params(1.0, 1, 0, 0, 7L), 7);
        int[] c = drawMany(s, l, params(1.0, 1, 0, 0, 8L), 8);
        assertThat(a).isEqualTo(b);
        assertThat(a).isNotEqualTo(c);
    }

    private static int[] drawMany(Sampler s, MemorySegment l, SamplingParams p, long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        int[] out = new int[64];
        for (int i = 0; i < out.length; i++) {
            out[i] = s.sample(l, 0, p, new TokenHistory(new int[0]), rng, -1).token();
        }
        return out;
    }

    @Test
    void drawsFollowTheSoftmaxAtTemperatureOne() {
        Sampler s = new Sampler(3);
        MemorySegment l = logits(0f, (float) Math.log(2), (float) Math.log(7)); // p = 0.1, 0.2, 0.7
        SplittableRandom rng = new SplittableRandom(42);
        int[] hist = new int[3];
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            hist[s.sample(l, 0, params(1.0, 1, 0, 0, null), new TokenHistory(new int[0]), rng, -1).token()]++;
        }
        assertThat(hist[0] / (double) n).isCloseTo(0.1, within(0.015));
        assertThat(hist[1] / (double) n).isCloseTo(0.2, within(0.015));
        assertThat(hist[2] / (double) n).isCloseTo(0.7, within(0.015));
    }

    @Test
    void lowTemperatureSharpensHighFlattens() {
        Sampler s = new Sampler(2);
        MemorySegment l = logits(0f, 1f);
        assertThat(share(s, l, params(0.1, 1, 0, 0, null), 1)).isGreaterThan(0.99);
        assertThat(share(s, l, params(10, 1, 0, 0, null), 1)).isBetween(0.45, 0.6);
    }

    private static double share(Sampler s, MemorySegment l, SamplingParams p, int token) {
        SplittableRandom rng = new SplittableRandom(3);
        int hits = 0;
        for (int i = 0; i < 4000; i++) {
            if (s.sample(l, 0, p, new TokenHistory(new int[0]), rng, -1).token() == token) {
                hits++;
            }
        }
        return hits / 4000.0;
    }

    @Test
    void topKKeepsOnlyTheKMostLikely() {
        Sampler s = new Sampler(5);
        MemorySegment l = logits(1f, 5f, 4.9f, 0f, 4.8f);
        SplittableRandom rng = new SplittableRandom(5);
        for (int i = 0; i < 2000; i++) {
            int t = s.sample(l, 0, params(5.0, 1, 2, 0, null), new TokenHistory(new int[0]), rng, -1).token();
            assertThat(t).isIn(1, 2);
        }
        assertThat(s.sample(l, 0, params(5.0, 1, 1, 0, null), new TokenHistory(new int[0]), rng, -1).token()).isEqualTo(1);
    }

    @Test
    void topPKeepsTheSmallestNucleus() {
        Sampler s = new Sampler(4);
        // p = 0.5, 0.3, 0.15, 0.05: top_p 0.75 needs {0, 1}
        MemorySegment l = logits((float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.15), (float) Math.log(0.05));
        SplittableRandom rng = new SplittableRandom(9);
        int[] hist = new int[4];
        for (int i = 0; i < 4000; i++) {
            hist[s.sample(l, 0, params(1.0, 0.75, 0, 0, null), new TokenHistory(new int[0]), rng, -1).token()]++;
        }
        assertThat(hist[2] + hist[3]).isZero();
        assertThat(hist[0] / 4000.0).isCloseTo(0.5 / 0.8, within(0.03));
    }

    @Test
    void minPDropsTokensBelowTheFractionOfTheBest() {
        Sampler s = new Sampler(3);
        MemorySegment l = logits((float) Math.log(0.6), (float) Math.log(0.35), (float) Math.log(0.05));
        SplittableRandom rng = new SplittableRandom(11);
        for (int i = 0; i < 3000; i++) {
            int t = s.sample(l, 0, params(1.0, 1, 0, 0.1, null), new TokenHistory(new int[0]), rng, -1).token();
            assertThat(t).isNotEqualTo(2);
        }
    }

    @Test
    void penaltiesFollowVllmSemantics() {
        Sampler s = new Sampler(3);
        TokenHistory h = new TokenHistory(new int[]{2});
        h.addGenerated(0);
        h.addGenerated(0);
        // frequency 1.0 on token 0 (seen twice) lowers it by 2 -> token 1 wins greedily
        SamplingParams freq = SamplingParams.builder().temperature(0).frequencyPenalty(1.0).build();
        assertThat(s.sample(logits(3f, 1.5f, 0f), 0, freq, h, new SplittableRandom(1), -1).token()).isEqualTo(1);
        // presence 2.0 lowers token 0 once by 2 -> 1.0 < 1.5
        SamplingParams pres = SamplingParams.builder().temperature(0).presencePenalty(2.0).build();
        assertThat(s.sample(logits(3f, 1.5f, 0f), 0, pres, h, new SplittableRandom(1), -1).token()).isEqualTo(1);
        // repetition 2.0: token 0 (output) 3 -> 1.5, token 2 (prompt) 1.6 -> 0.8, token 1 untouched 1.55
        SamplingParams rep = SamplingParams.builder().temperature(0).repetitionPenalty(2.0).build();
        assertThat(s.sample(logits(3f, 1.55f, 1.6f), 0, rep, h, new SplittableRandom(1), -1).token()).isEqualTo(1);
        // negative logits are multiplied, making them less likely still
        assertThat(s.sample(logits(-1f, -1.5f, -3f), 0, rep, h, new SplittableRandom(1), -1).token()).isEqualTo(1);
    }

    @Test
    void minTokensSuppressesEosAndStopTokens() {
        Sampler s = new Sampler(3);
        SamplingParams p = SamplingParams.builder().temperature(0).minTokens(2).stopTokenIds(Set.of(2)).build();
        TokenHistory h = new TokenHistory(new int[0]);
        assertThat(s.sample(logits(0f, 9f, 8f), 0, p, h, new SplittableRandom(1), 1).token()).isEqualTo(0);
        h.addGenerated(0);
        h.addGenerated(0);
        assertThat(s.sample(logits(0f, 9f, 8f), 0, p, h, new SplittableRandom(1), 1).token()).isEqualTo(1);
    }

    @Test
    void logprobsAreTheRawLogSoftmax() {
        Sampler s = new Sampler(3);
        MemorySegment l = logits(1f, 2f, 3f);
        SamplingParams p = SamplingParams.builder().temperature(0).logprobs(2).build();
        SampledToken t = s.sample(l, 0, p, new TokenHistory(new int[0]), new SplittableRandom(1), -1);
        double z = Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3));
        assertThat(t.token()).isEqualTo(2);
        assertThat((double) t.logprob()).isCloseTo(3 - z, within(1e-6));
        assertThat(t.top().tokens()).containsExactly(2, 1);
        assertThat((double) t.top().logprobs()[1]).isCloseTo(2 - z, within(1e-6));
        SampledToken prompt = Logprobs.of(l, 0, 3, 0, 3);
        assertThat((double) prompt.logprob()).isCloseTo(1 - z, within(1e-6));
        assertThat(prompt.top().tokens()).containsExactly(2, 1, 0);
    }

    @Test
    void validationNamesTheParameter() {
        assertThatThrownBy(() -> SamplingParams.builder().temperature(-1).build(20, 100))
                .isInstanceOfSatisfying(SamplingParameterException.class, e -> assertThat(e.param()).isEqualTo("temperature"));
        assertThatThrownBy(() -> SamplingParams.builder().topP(0).build(20, 100))
                .isInstanceOfSatisfying(SamplingParameterException.class, e -> assertThat(e.param()).isEqualTo("top_p"));
        assertThatThrownBy(() -> SamplingParams.builder().logprobs(21).build(20, 100))
                .isInstanceOfSatisfying(SamplingParameterException.class, e -> assertThat(e.param()).isEqualTo("logprobs"));
        assertThatThrownBy(() -> SamplingParams.builder().stopTokenIds(Set.of(100)).build(20, 100))
                .isInstanceOfSatisfying(SamplingParameterException.class, e -> assertThat(e.param()).isEqualTo("stop_token_ids"));
        // min_tokens is checked against the output budget the request ends up with
        assertThatThrownBy(() -> SamplingParams.builder().maxTokens(4).minTokens(5).build(20, 100))
                .isInstanceOfSatisfying(SamplingParameterException.class, e -> assertThat(e.param()).isEqualTo("min_tokens"));
        assertThat(SamplingParams.builder().maxTokens(8).minTokens(5).build(20, 100).minTokens()).isEqualTo(5);
    }
}
