package io.strata.platform.engine.sampling;

import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;

/**
 * Log-softmax helpers over one row of logits. Logprobs are reported from the model's raw
 * distribution (before penalties, temperature and truncation), as vLLM does by default, so that
 * they can be compared with a reference implementation's logits. A row is {@code vocab} fp32 values
 * of a step's logits starting at element {@code offset}; they are read in place, never kept.
 */
public final class Logprobs {
    private Logprobs() {
    }

    /** log Σ exp(logits[offset .. offset+vocab)). */
    public static double logSumExp(MemorySegment logits, long offset, int vocab) {
        float max = Float.NEGATIVE_INFINITY;
        for (long i = offset, end = offset + vocab; i < end; i++) {
            float v = logits.getAtIndex(StepResult.FLOAT, i);
            if (v > max) {
                max = v;
            }
        }
        if (max == Float.NEGATIVE_INFINITY) {
            return max;
        }
        double sum = 0;
        for (long i = offset, end = offset + vocab; i < end; i++) {
            sum += Math.exp(logits.getAtIndex(StepResult.FLOAT, i) - max);
        }
        return max + Math.log(sum);
    }

    /** The {@code n} largest entries of the row as log-probabilities, most likely first. */
    public static TopLogprobs top(MemorySegment logits, long offset, int vocab, int n, double logZ) {
        int k = Math.min(n, vocab);
        if (k <= 0) {
            return TopLogprobs.NONE;
        }
        int[] ids = new int[k];
        float[] vals = new float[k];
        int filled = 0;
        for (int i = 0; i < vocab; i++) {
            float v = logits.getAtIndex(StepResult.FLOAT, offset + i);
            if (filled < k || v > vals[k - 1]) {
                // insertion into the sorted top-k: a new slot while filling, then replacing the smallest
                int j = filled < k ? filled++ : k - 1;
                while (j > 0 && vals[j - 1] < v) {
                    vals[j] = vals[j - 1];
                    ids[j] = ids[j - 1];
                    j--;
                }
                vals[j] = v;
                ids[j] = i;
            }
        }
        for (int j = 0; j < k; j++) {
            vals[j] = (float) (vals[j] - logZ);
        }
        return new TopLogprobs(ids, vals);
    }

    /** 1 + the number of entries strictly larger than the token's. */
    public static int rank(MemorySegment logits, long offset, int vocab, int token) {
        float v = logits.getAtIndex(StepResult.FLOAT, offset + token);
        int above = 0;
        for (long i = offset, end = offset + vocab; i < end; i++) {
            if (logits.getAtIndex(StepResult.FLOAT, i) > v) {
                above++;
            }
        }
        return above + 1;
    }

    /** Logprob of {@code token} plus the top {@code n}, for one position of a prompt or of the output. */
    public static SampledToken of(MemorySegment logits, long offset, int vocab, int token, int n) {
        double logZ = logSumExp(logits, offset, vocab);
        float lp = (float) (logits.getAtIndex(StepResult.FLOAT, offset + token) - logZ);
        return new SampledToken(token, lp, rank(logits, offset, vocab, token),
                n > 0 ? top(logits, offset, vocab, n, logZ) : TopLogprobs.NONE);
    }
}
