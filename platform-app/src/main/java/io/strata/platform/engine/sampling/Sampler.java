package io.strata.platform.engine.sampling;

import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;
import java.util.random.RandomGenerator;

/**
 * Turns one row of logits into a token. Owns scratch buffers sized to the vocabulary, so it is
 * confined to one thread (the engine loop, or one of a {@link BatchSampler}'s threads) and allocates
 * nothing per token unless logprobs are requested. A row's result depends only on its logits and
 * arguments, never on the rows sampled before it.
 *
 * <p>Order of operations (as in vLLM): raw logprobs are taken first; then {@code min_tokens}
 * suppression and penalties; greedy = argmax of the penalised logits; otherwise temperature,
 * softmax, min-p, top-k, top-p and an inverse-CDF draw from the request's own generator, which
 * makes a seeded request reproducible whatever else is in the batch.
 *
 * <p>{@link ExactDraw} defines a non-greedy draw (every weight, every candidate sorted); {@link FastDraw} reaches
 * its token, for the same generator state, through the few logits that matter, and hands the row back to the
 * definition when its bounds cannot settle the token. Without the {@code jdk.incubator.vector} module every row
 * takes the definition.
 */
public final class Sampler {
    private static final boolean VECTOR_API = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    private final int vocab;
    private final float[] work;
    /** Null without the Vector API, and then {@link #fast} too. */
    private final LogitBlocks blocks;
    private final ExactDraw exact;
    private final FastDraw fast;

    public Sampler(int vocab) {
        this.vocab = vocab;
        this.work = new float[vocab];
        this.blocks = VECTOR_API && LogitBlocks.supported() ? new LogitBlocks(vocab) : null;
        this.exact = new ExactDraw(work, blocks);
        this.fast = blocks == null ? null : new FastDraw(exact, blocks);
    }

    public int vocab() {
        return vocab;
    }

    /** Rows that weighed every logit exactly (read by the tests and the benchmark). */
    long exactWeighings() {
        return exact.weighings;
    }

    /** Rows drawn by the definition, no shortcut having settled them (read by the tests and the benchmark). */
    long definitionDraws() {
        return exact.draws;
    }

    /**
     * Whether {@link #sample} of a row would be the argmax of its raw logits and nothing more: greedy, no logprobs,
     * no penalties, nothing suppressed below min_tokens. Such a row's token is {@link StepResult#argmax} of the row
     * (the rule {@link #argmax()} applies), so a backend may compute it where the logits are.
     */
    public static boolean isPlainArgmax(SamplingParams p, TokenHistory history) {
        return p.isGreedy() && p.logprobs() == null && !p.hasPenalties() && history.generatedCount() >= p.minTokens();
    }

    /**
     * @param logits    a step's logits (fp32); the row starts at element {@code offset} and is {@link #vocab()}
     *                  long. Read before this returns, never kept
     * @param history   what this choice has seen so far (penalties, min_tokens)
     * @param rng       the choice's generator
     * @param eosToken  end-of-sequence id, suppressed while fewer than min_tokens were generated; -1 if none
     */
    public SampledToken sample(MemorySegment logits, long offset, SamplingParams p, TokenHistory history,
                               RandomGenerator rng, int eosToken) {
        double logZ = Double.NaN;
        if (p.logprobs() != null) {
            logZ = Logprobs.logSumExp(logits, offset, vocab);
        }
        boolean suppress = history.generatedCount() < p.minTokens();
        // a non-greedy row that nothing changes after the copy gets its block maxima during the copy
        boolean scanWhileCopying = blocks != null && !p.isGreedy() && !suppress && !p.hasPenalties();
        float scan = Float.NaN;
        if (scanWhileCopying) {
            scan = blocks.copyScanningMaxima(logits, 4L * offset, work);
        } else {
            MemorySegment.copy(logits, StepResult.FLOAT, 4L * offset, work, 0, vocab);
        }
        if (suppress) {
            if (eosToken >= 0) {
                work[eosToken] = Float.NEGATIVE_INFINITY;
            }
            for (int id : p.stopTokenIds()) {
                work[id] = Float.NEGATIVE_INFINITY;
            }
        }
        if (p.hasPenalties()) {
            applyPenalties(p, history);
        }
        int token;
        if (p.isGreedy()) {
            token = argmax();
        } else {
            if (blocks != null && !scanWhileCopying) {
                scan = blocks.scanMaxima(work);
            }
            token = draw(p, rng, scan);
        }
        if (p.logprobs() == null) {
            return new SampledToken(token, Float.NaN, 0, TopLogprobs.NONE);
        }
        float lp = (float) (logits.getAtIndex(StepResult.FLOAT, offset + token) - logZ);
        TopLogprobs top = p.logprobs() > 0 ? Logprobs.top(logits, offset, vocab, p.logprobs(), logZ) : TopLogprobs.NONE;
        return new SampledToken(token, lp, Logprobs.rank(logits, offset, vocab, token), top);
    }

    private void applyPenalties(SamplingParams p, TokenHistory history) {
        float rep = (float) p.repetitionPenalty();
        if (rep != 1f) {
            for (int t : history.promptDistinct()) {
                work[t] = repetition(work[t], rep);
            }
            history.forEachGenerated((t, c) -> {
                if (!history.seenInPrompt(t)) {
                    work[t] = repetition(work[t], rep);
                }
            });
        }
        float freq = (float) p.frequencyPenalty();
        float pres = (float) p.presencePenalty();
        if (freq != 0f || pres != 0f) {
            history.forEachGenerated((t, c) -> work[t] -= freq * c + pres);
        }
    }

    private static float repetition(float logit, float penalty) {
        return logit > 0 ? logit / penalty : logit * penalty;
    }

    /** The greedy draw: the same rule a backend applies when it returns a row's token ({@link StepResult#argmax}). */
    private int argmax() {
        return StepResult.argmax(MemorySegment.ofArray(work), 0, vocab);
    }

    /**
     * @param scan the block maxima scan's largest logit: NaN when a logit is NaN or there was no scan, in which
     *             case (or for +inf) the definition alone says what happens
     */
    private int draw(SamplingParams p, RandomGenerator rng, float scan) {
        float max = Float.isFinite(scan) ? scan : ExactDraw.maxIgnoringNaN(work);
        if (max == Float.NEGATIVE_INFINITY) {
            return argmax();
        }
        exact.begin(max, p);
        double r = rng.nextDouble(); // the definition's one draw from the generator, whichever way the row goes
        return Float.isFinite(scan) ? fast.draw(p, r) : exact.draw(p, r);
    }
}
