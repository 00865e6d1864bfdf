package io.strata.platform.engine.sampling;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntSupplier;
import java.util.random.RandomGenerator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Sampler}'s shortcuts against {@link ReferenceDraw}, the draw as it was: the same token and the same use
 * of the generator for the same logits, parameters and seed.
 */
class SamplerEquivalenceTest {

    private static final double[] TEMPERATURES = {1e-4, 0.05, 0.3, 0.7, 1.0, 1.3, 10, 100};
    private static final double[] TOP_PS = {1e-9, 0.1, 0.5, 0.9, 0.95, 0.999, 1, 1, 1};
    private static final double[] MIN_PS = {0, 0, 0, 0, 1e-30, 1e-6, 0.05, 0.5, 1};

    @Test
    void randomRowsGiveTheReferenceToken() {
        SplittableRandom g = new SplittableRandom(20261201);
        int[] vocabs = {1, 2, 3, 7, 63, 64, 65, 257, 1000, 4099, 20_000};
        int rows = 0;
        for (int vocab : vocabs) {
            Sampler s = new Sampler(vocab);
            ReferenceDraw ref = new ReferenceDraw(vocab);
            for (int row = 0; row < 400; row++, rows++) {
                float[] logits = logits(g, vocab);
                for (int draw = 0; draw < 3; draw++) {
                    assertSameToken(s, ref, logits, randomParams(g, vocab), g.nextLong());
                }
            }
        }
        assertThat(rows).isEqualTo(vocabs.length * 400);
    }

    /**
     * Penalties and min_tokens edit the row after the copy, so the block maxima are scanned afterwards: the draw
     * must still be the reference's over the edited row (penalties as vLLM applies them, written out here).
     */
    @Test
    void penalisedAndSuppressedRowsGiveTheReferenceToken() {
        SplittableRandom g = new SplittableRandom(29);
        int vocab = 20_000, eos = 7;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        for (int row = 0; row < 200; row++) {
            float[] logits = row % 2 == 0 ? peaked(g, vocab) : gaussian(g, vocab, 2);
            int[] prompt = g.ints(20, 0, vocab).toArray();
            TokenHistory history = new TokenHistory(prompt);
            int[] counts = new int[vocab];
            for (int i = 0; i < 15; i++) { // repeats, and tokens of the prompt, among what was generated
                int t = g.nextInt(3) == 0 ? prompt[g.nextInt(prompt.length)] : g.nextInt(2) == 0 ? argmax(logits) : g.nextInt(vocab);
                history.addGenerated(t);
                counts[t]++;
            }
            float rep = 1 + g.nextInt(3) * 0.3f, freq = g.nextInt(3) * 0.5f, pres = g.nextInt(3) * 0.7f;
            int stop = g.nextInt(vocab);
            SamplingParams p = params(TEMPERATURES[2 + g.nextInt(5)], TOP_PS[g.nextInt(TOP_PS.length)],
                    new int[]{0, 0, 1, 50}[g.nextInt(4)], MIN_PS[g.nextInt(MIN_PS.length)]).toBuilder()
                    .repetitionPenalty(rep).frequencyPenalty(freq).presencePenalty(pres)
                    .minTokens(g.nextInt(2) == 0 ? 100 : 0).stopTokenIds(java.util.Set.of(stop)).build();
            float[] edited = logits.clone();
            if (history.generatedCount() < p.minTokens()) {
                edited[eos] = Float.NEGATIVE_INFINITY;
                edited[stop] = Float.NEGATIVE_INFINITY;
            }
            java.util.Set<Integer> inPrompt = new java.util.HashSet<>();
            for (int t : prompt) {
                inPrompt.add(t);
            }
            for (int t = 0; t < vocab; t++) {
                if (rep != 1f && (inPrompt.contains(t) || counts[t] > 0)) {
                    edited[t] = edited[t] > 0 ? edited[t] / rep : edited[t] * rep;
                }
                if (counts[t] > 0) {
                    edited[t] -= freq * counts[t] + pres;
                }
            }
            long seed = g.nextLong();
            int token = s.sample(MemorySegment.ofArray(logits), 0, p, history, new SplittableRandom(seed), eos).token();
            assertThat(token).as("row %d", row).isEqualTo(ref.draw(edited, p, new SplittableRandom(seed)));
        }
    }

    private static int argmax(float[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) {
            if (x[i] > x[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Without the Vector API the sampler draws by the definition alone, its weights from Math.exp one by one. */
    @Test
    void theDefinitionWithoutVectorsGivesTheReferenceToken() {
        SplittableRandom g = new SplittableRandom(23);
        for (int vocab : new int[]{1, 5, 300, 5000}) {
            float[] row = new float[vocab];
            ExactDraw definition = new ExactDraw(row, null);
            ReferenceDraw ref = new ReferenceDraw(vocab);
            for (int i = 0; i < 300; i++) {
                float[] logits = logits(g, vocab);
                SamplingParams p = randomParams(g, vocab);
                float max = ExactDraw.maxIgnoringNaN(logits);
                if (max == Float.NEGATIVE_INFINITY) {
                    continue; // greedy's argmax, not the draw's
                }
                long seed = g.nextLong();
                System.arraycopy(logits, 0, row, 0, vocab);
                definition.begin(max, p);
                int token = definition.draw(p, new SplittableRandom(seed).nextDouble());
                assertThat(token).isEqualTo(ref.draw(logits.clone(), p, new SplittableRandom(seed)));
            }
        }
    }

    @Test
    void fullVocabularyRowsGiveTheReferenceToken() {
        int vocab = 129_280;
        SplittableRandom g = new SplittableRandom(7);
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        for (int row = 0; row < 60; row++) {
            float[] logits = logits(g, vocab);
            for (SamplingParams p : typicalSettings()) {
                assertSameToken(s, ref, logits, p, g.nextLong());
            }
            assertSameToken(s, ref, logits, randomParams(g, vocab), g.nextLong());
        }
    }

    /** The shortcuts must actually serve the typical rows, or the comparisons above would prove little. */
    @Test
    void typicalRowsTakeTheShortcuts() {
        int vocab = 129_280;
        SplittableRandom g = new SplittableRandom(11);
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        int draws = 0;
        for (int row = 0; row < 40; row++) {
            float[] logits = peaked(g, vocab);
            for (SamplingParams p : typicalSettings()) {
                assertSameToken(s, ref, logits, p, g.nextLong());
                draws++;
            }
        }
        assertThat(s.exactWeighings()).as("draws that needed every weight, of %d", draws).isLessThanOrEqualTo(2);
        assertThat(s.definitionDraws()).as("draws the definition made, of %d", draws).isLessThanOrEqualTo(2);
    }

    /**
     * Rows where top-p reaches deep into the bulk, or where min-p lets thousands through: the head of the sorted
     * candidates, the histogram of weights and the gathering in token order must serve them, not the definition.
     */
    @Test
    void broadAndFlatRowsTakeTheShortcutsToo() {
        int vocab = 129_280;
        SplittableRandom g = new SplittableRandom(19);
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        List<SamplingParams> settings = List.of(params(1.0, 0.95, 0, 0), params(0.8, 0.9, 0, 0), params(1.0, 0.999, 0, 0),
                params(1.0, 1, 0, 0.05), params(1.0, 0.9, 0, 0.02));
        int draws = 0;
        for (int row = 0; row < 30; row++) {
            float[] logits = row % 2 == 0 ? broad(g, vocab) : gaussian(g, vocab, 1.0);
            for (SamplingParams p : settings) {
                assertSameToken(s, ref, logits, p, g.nextLong());
                draws++;
            }
        }
        assertThat(s.exactWeighings()).as("draws that weighed every logit (the histogram)").isGreaterThan(draws / 10);
        assertThat(s.definitionDraws()).as("draws the definition made, of %d", draws).isLessThanOrEqualTo(3);
    }

    /** Draws that land within a few ulps of a token's interval: the bounds cannot settle them, the definition must. */
    @Test
    void drawsOnTheBoundaryOfATokenFallBackToTheSameToken() {
        SplittableRandom g = new SplittableRandom(3);
        int vocab = 5000;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        SamplingParams p = params(0.8, 1, 0, 0);
        int checked = 0;
        for (int row = 0; row < 20; row++) {
            float[] logits = gaussian(g, vocab, 1 + g.nextDouble() * 3);
            double[] prefix = referencePrefix(logits, p);
            double total = prefix[vocab - 1];
            for (int t = 0; t < 20; t++) {
                double r = prefix[g.nextInt(vocab - 1)] / total;
                for (double rr : new double[]{Math.nextDown(Math.nextDown(r)), Math.nextDown(r), r, Math.nextUp(r)}) {
                    if (rr >= 0 && rr < 1) {
                        assertSameToken(s, ref, logits, p, new Scripted(rr), new Scripted(rr));
                        checked++;
                    }
                }
            }
        }
        assertThat(checked).isGreaterThan(1000);
        assertThat(s.definitionDraws()).as("boundary draws taken by the definition").isGreaterThan(100);
    }

    /** top_p set so that a prefix sum of the sorted weights equals top_p × total, give or take an ulp. */
    @Test
    void nucleusCutsOnAPrefixSumFallBackToTheSameCut() {
        SplittableRandom g = new SplittableRandom(5);
        int vocab = 3000;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        long before = s.definitionDraws();
        for (int row = 0; row < 60; row++) {
            float[] logits = peaked(g, vocab);
            double[] sorted = referenceSortedPrefix(logits, 1.0);
            double total = sorted[sorted.length - 1];
            int j = g.nextInt(Math.min(10, sorted.length));
            double topP = sorted[j] / total;
            for (double pp : new double[]{Math.nextDown(topP), topP, Math.nextUp(topP)}) {
                if (pp > 0 && pp < 1) {
                    assertSameToken(s, ref, logits, params(1.0, pp, 0, 0), g.nextLong());
                }
            }
        }
        assertThat(s.definitionDraws() - before).as("cuts taken by the definition").isGreaterThan(10);
    }

    /** At a high temperature neighbouring logits share a weight, and the top-k cut falls inside such a tie. */
    @Test
    void weightTiesAcrossTheTopKCutKeepTheDefinitionsOrder() {
        SplittableRandom g = new SplittableRandom(9);
        int vocab = 4000;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        for (int row = 0; row < 100; row++) {
            float[] logits = new float[vocab];
            for (int i = 0; i < vocab; i++) { // a few float ulps apart around 5
                logits[i] = Float.intBitsToFloat(Float.floatToRawIntBits(5f) + g.nextInt(-40, 40));
            }
            for (int k : new int[]{1, 3, 20, 100, 1000}) {
                assertSameToken(s, ref, logits, params(100, 1, k, 0), g.nextLong());
                assertSameToken(s, ref, logits, params(100, 0.5, k, 0), g.nextLong());
            }
            assertSameToken(s, ref, logits, params(100, 0.3, 0, 0), g.nextLong());
        }
    }

    /** Logits whose weight is min_p itself, or one ulp either side. */
    @Test
    void weightsAtMinPKeepTheDefinitionsCut() {
        SplittableRandom g = new SplittableRandom(13);
        int vocab = 2000;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        for (int row = 0; row < 200; row++) {
            float[] logits = gaussian(g, vocab, 2);
            float max = max(logits);
            double minP = 0.001 + g.nextDouble() * 0.3;
            float atMinP = max + (float) Math.log(minP);
            for (int i = 0; i < 30; i++) {
                logits[g.nextInt(vocab)] = Float.intBitsToFloat(Float.floatToRawIntBits(atMinP) + g.nextInt(-2, 3));
            }
            for (SamplingParams p : List.of(params(1, 1, 0, minP), params(1, 0.9, 0, minP), params(1, 1, 40, minP))) {
                assertSameToken(s, ref, logits, p, g.nextLong());
            }
        }
    }

    @Test
    void nanAndInfiniteLogitsBehaveAsTheDefinitionSays() {
        SplittableRandom g = new SplittableRandom(17);
        int vocab = 300;
        Sampler s = new Sampler(vocab);
        ReferenceDraw ref = new ReferenceDraw(vocab);
        for (int row = 0; row < 100; row++) {
            float[] logits = gaussian(g, vocab, 2);
            float odd = switch (row % 3) {
                case 0 -> Float.NaN;
                case 1 -> Float.POSITIVE_INFINITY;
                default -> Float.NEGATIVE_INFINITY;
            };
            for (int i = 0; i < 1 + row % 5; i++) {
                logits[g.nextInt(vocab)] = odd;
            }
            assertSameToken(s, ref, logits, randomParams(g, vocab), g.nextLong());
        }
        float[] allSuppressed = new float[vocab];
        Arrays.fill(allSuppressed, Float.NEGATIVE_INFINITY);
        assertSameToken(s, ref, allSuppressed, params(1, 0.9, 0, 0), 1);
    }

    // ---- rows and settings ----------------------------------------------------------------------------------

    /** The benchmark's settings: temperature alone, top-p, top-k, both, min-p. */
    static List<SamplingParams> typicalSettings() {
        return List.of(params(0.7, 1, 0, 0), params(1.0, 1, 0, 0), params(1.0, 0.95, 0, 0), params(0.8, 0.9, 0, 0),
                params(1.0, 1, 50, 0), params(0.7, 1, 20, 0), params(1.0, 0.9, 50, 0), params(0.9, 0.95, 100, 0),
                params(1.0, 1, 0, 0.05));
    }

    static SamplingParams params(double temperature, double topP, int topK, double minP) {
        return SamplingParams.builder().temperature(temperature).topP(topP).topK(topK).minP(minP).build();
    }

    private static SamplingParams randomParams(SplittableRandom g, int vocab) {
        int[] ks = {0, 0, 0, -1, 1, 2, 20, 50, 100, 2000, 2500, vocab - 1, vocab, vocab + 5};
        return params(TEMPERATURES[g.nextInt(TEMPERATURES.length)], TOP_PS[g.nextInt(TOP_PS.length)],
                Math.max(-1, ks[g.nextInt(ks.length)]), MIN_PS[g.nextInt(MIN_PS.length)]);
    }

    /** One of several kinds of row, -inf entries (min_tokens suppression) mixed into some. */
    private static float[] logits(SplittableRandom g, int vocab) {
        float[] x = switch (g.nextInt(8)) {
            case 0 -> gaussian(g, vocab, 0.01 + g.nextDouble() * 0.5);
            case 1 -> gaussian(g, vocab, 1 + g.nextDouble() * 10);
            case 2 -> gaussian(g, vocab, 300);
            case 3 -> peaked(g, vocab);
            case 7 -> broad(g, vocab);
            case 4 -> { // few distinct values: ties in logit
                float[] v = gaussian(g, vocab, 2);
                for (int i = 0; i < vocab; i++) {
                    v[i] = Math.round(v[i] * 2) / 2f;
                }
                yield v;
            }
            case 5 -> { // bf16-rounded, as a model may hand them over
                float[] v = peaked(g, vocab);
                for (int i = 0; i < vocab; i++) {
                    v[i] = Float.intBitsToFloat(Float.floatToRawIntBits(v[i]) & 0xFFFF0000);
                }
                yield v;
            }
            default -> new float[vocab]; // all equal
        };
        switch (g.nextInt(4)) {
            case 0 -> {
                for (int i = 0; i < 1 + vocab / 1000; i++) {
                    x[g.nextInt(vocab)] = Float.NEGATIVE_INFINITY;
                }
            }
            case 1 -> { // all but a few suppressed
                int keep = g.nextInt(vocab);
                for (int i = 0; i < vocab; i++) {
                    if (i != keep && g.nextInt(50) != 0) {
                        x[i] = Float.NEGATIVE_INFINITY;
                    }
                }
            }
            default -> { }
        }
        return x;
    }

    static float[] gaussian(SplittableRandom g, int vocab, double scale) {
        float[] x = new float[vocab];
        for (int i = 0; i < vocab; i++) {
            x[i] = (float) (g.nextGaussian() * scale);
        }
        return x;
    }

    /**
     * Like a language model's row: a Gaussian bulk (sd 2.5) and a handful of tokens some 20 above it, which hold
     * all but about a percent of the mass at temperature 1.
     */
    static float[] peaked(SplittableRandom g, int vocab) {
        float[] x = gaussian(g, vocab, 2.5);
        double top = 21 + g.nextGaussian();
        int head = 1 + g.nextInt(16);
        for (int i = 0; i < head && i < vocab; i++) {
            x[g.nextInt(vocab)] = (float) (top + 2.5 * Math.log(g.nextDouble()));
        }
        return x;
    }

    /** A bulk that outweighs the few tokens above it: top-p reaches deep into it. */
    static float[] broad(SplittableRandom g, int vocab) {
        float[] x = gaussian(g, vocab, 2.5);
        int head = 1 + g.nextInt(24);
        for (int i = 0; i < head && i < vocab; i++) {
            x[g.nextInt(vocab)] = (float) (14 + g.nextGaussian() * 3);
        }
        return x;
    }

    private static float max(float[] x) {
        float m = Float.NEGATIVE_INFINITY;
        for (float v : x) {
            m = Math.max(m, v);
        }
        return m;
    }

    // ---- comparison -----------------------------------------------------------------------------------------

    private static void assertSameToken(Sampler s, ReferenceDraw ref, float[] logits, SamplingParams p, long seed) {
        SplittableRandom a = new SplittableRandom(seed), b = new SplittableRandom(seed);
        if (assertSameToken(s, ref, logits, p, a, b)) {
            assertThat(a.nextLong()).as("generator state after %s", p).isEqualTo(b.nextLong());
        }
    }

    /**
     * The same token, or the same exception (the reference fails on +inf logits with top-k or top-p, before or
     * after its draw from the generator, which a failed row leaves unused): true for a token.
     */
    private static boolean assertSameToken(Sampler s, ReferenceDraw ref, float[] logits, SamplingParams p,
                                        RandomGenerator fast, RandomGenerator slow) {
        String token = outcome(() -> s.sample(MemorySegment.ofArray(logits), 0, p, new TokenHistory(new int[0]), fast, -1).token());
        String expected = outcome(() -> ref.draw(logits.clone(), p, slow));
        assertThat(token).as("T=%s top_p=%s top_k=%s min_p=%s vocab=%d", p.temperature(), p.topP(), p.topK(), p.minP(),
                logits.length).isEqualTo(expected);
        return expected.chars().allMatch(c -> c == '-' || Character.isDigit(c));
    }

    private static String outcome(IntSupplier draw) {
        try {
            return Integer.toString(draw.getAsInt());
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }

    /** The definition's running sums in token order, temperature alone. */
    private static double[] referencePrefix(float[] logits, SamplingParams p) {
        float max = max(logits);
        double acc = 0;
        double[] prefix = new double[logits.length];
        for (int i = 0; i < logits.length; i++) {
            acc += (float) Math.exp((logits[i] - max) * (1.0 / p.temperature()));
            prefix[i] = acc;
        }
        return prefix;
    }

    /** The definition's running sums from the top of the sorted weights; the last is its total. */
    private static double[] referenceSortedPrefix(float[] logits, double temperature) {
        float max = max(logits);
        List<Long> keys = new ArrayList<>();
        for (int i = 0; i < logits.length; i++) {
            float w = (float) Math.exp((logits[i] - max) * (1.0 / temperature));
            if (w > 0f) {
                keys.add(((long) Float.floatToRawIntBits(w) << 32) | i);
            }
        }
        keys.sort(null);
        double[] prefix = new double[keys.size()];
        double acc = 0;
        for (int j = 0; j < keys.size(); j++) {
            acc += Float.intBitsToFloat((int) (keys.get(keys.size() - 1 - j) >>> 32));
            prefix[j] = acc;
        }
        return prefix;
    }

    /** A generator whose every nextDouble is the same chosen value. */
    private record Scripted(double value) implements RandomGenerator {
        @Override
        public double nextDouble() {
            return value;
        }

        @Override
        public long nextLong() {
            throw new UnsupportedOperationException();
        }
    }
}
