package io.strata.platform.engine.sampling;

/**
 * Log-softmax helpers over one row of logits. Logprobs are reported from the model's raw
 * distribution (before penalties, temperature and truncation), as vLLM does by default, so that
 * they can be compared with a reference implementation's logits.
 */
public final class Logprobs {
    private Logprobs() {
    }

    /** log Σ exp(logits[offset .. offset+vocab)). */
    public static double logSumExp(float[] logits, int offset, int vocab) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = offset, end = offset + vocab; i < end; i++) {
            if (logits[i] > max) {
                max = logits[i];
            }
        }
        if (max == Float.NEGATIVE_INFINITY) {
            return max;
        }
        double sum = 0;
        for (int i = offset, end = offset + vocab; i < end; i++) {
            sum += Math.exp(logits[i] - max);
        }
        return max + Math.log(sum);
    }

    /** The {@code n} largest entries of the row as log-probabilities, most likely first. */
    public static TopLogprobs top(float[] logits, int offset, int vocab, int n, double logZ) {
        int k = Math.min(n, vocab);
        if (k <= 0) {
            return TopLogprobs.NONE;
        }
        int[] ids = new int[k];
        float[] vals = new float[k];
        int filled = 0;
        for (int i = 0; i < vocab; i++) {
            float v = logits[offset + i];
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
    public static int rank(float[] logits, int offset, int vocab, int token) {
        float v = logits[offset + token];
        int above = 0;
        for (int i = offset, end = offset + vocab; i < end; i++) {
            if (logits[i] > v) {
                above++;
            }
        }
        return above + 1;
    }

    /** Logprob of {@code token} plus the top {@code n}, for one position of a prompt or of the output. */
    public static SampledToken of(float[] logits, int offset, int vocab, int token, int n) {
        double logZ = logSumExp(logits, offset, vocab);
        float lp = (float) (logits[offset + token] - logZ);
        return new SampledToken(token, lp, rank(logits, offset, vocab, token),
                n > 0 ? top(logits, offset, vocab, n, logZ) : TopLogprobs.NONE);
    }
}
