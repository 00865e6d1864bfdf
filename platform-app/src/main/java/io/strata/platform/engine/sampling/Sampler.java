package io.strata.platform.engine.sampling;

import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
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
 */
public final class Sampler {
    private final int vocab;
    private final float[] work;
    private final long[] order;

    public Sampler(int vocab) {
        this.vocab = vocab;
        this.work = new float[vocab];
        this.order = new long[vocab];
    }

    public int vocab() {
        return vocab;
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
        MemorySegment.copy(logits, StepResult.FLOAT, 4L * offset, work, 0, vocab);
        if (history.generatedCount() < p.minTokens()) {
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
        int token = p.isGreedy() ? argmax() : draw(p, rng);
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

    private int argmax() {
        int best = 0;
        float bestVal = work[0];
        for (int i = 1; i < vocab; i++) {
            if (work[i] > bestVal) {
                bestVal = work[i];
                best = i;
            }
        }
        return best;
    }

    private int draw(SamplingParams p, RandomGenerator rng) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            if (work[i] > max) {
                max = work[i];
            }
        }
        if (max == Float.NEGATIVE_INFINITY) {
            return argmax();
        }
        double invT = 1.0 / p.temperature();
        // Unnormalised probabilities, largest = 1, so min-p compares against minP directly.
        float minKeep = (float) p.minP();
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            float w = (float) Math.exp((work[i] - max) * invT);
            if (w < minKeep) {
                w = 0f;
            }
            work[i] = w;
            sum += w;
        }
        int k = p.topK() > 0 && p.topK() < vocab ? p.topK() : 0;
        boolean nucleus = p.topP() < 1.0;
        if (k == 0 && !nucleus) {
            return drawLinear(sum, rng);
        }
        // Sort the surviving candidates by probability; positive float bits order like the floats.
        int n = 0;
        for (int i = 0; i < vocab; i++) {
            if (work[i] > 0f) {
                order[n++] = ((long) Float.floatToRawIntBits(work[i]) << 32) | i;
            }
        }
        Arrays.sort(order, 0, n);
        int first = k > 0 ? Math.max(0, n - k) : 0;
        double kept = 0;
        for (int j = n - 1; j >= first; j--) {
            kept += Float.intBitsToFloat((int) (order[j] >>> 32));
        }
        if (nucleus) {
            double target = p.topP() * kept;
            double acc = 0;
            int j = n - 1;
            for (; j > first; j--) {
                acc += Float.intBitsToFloat((int) (order[j] >>> 32));
                if (acc >= target) {
                    break;
                }
            }
            first = j;
            kept = 0;
            for (int i = n - 1; i >= first; i--) {
                kept += Float.intBitsToFloat((int) (order[i] >>> 32));
            }
        }
        double u = rng.nextDouble() * kept;
        double acc = 0;
        for (int j = n - 1; j >= first; j--) {
            acc += Float.intBitsToFloat((int) (order[j] >>> 32));
            if (u < acc) {
                return (int) order[j];
            }
        }
        return (int) order[first];
    }

    private int drawLinear(double sum, RandomGenerator rng) {
        double u = rng.nextDouble() * sum;
        double acc = 0;
        int last = 0;
        for (int i = 0; i < vocab; i++) {
            float w = work[i];
            if (w > 0f) {
                acc += w;
                last = i;
                if (u < acc) {
                    return i;
                }
            }
        }
        return last;
    }
}
