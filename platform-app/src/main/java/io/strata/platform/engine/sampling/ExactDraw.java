package io.strata.platform.engine.sampling;

import java.util.Arrays;

/**
 * The definition of a non-greedy draw, in vLLM's order: every weight {@code w = (float) exp((x - max) / T)} (the
 * largest 1, so min-p compares with {@code min_p} itself, and a weight under it becomes 0); with top-k or top-p
 * every candidate ({@code w > 0}) sorted by {@code (w, token)}, ties going to the larger token; top-k, then top-p,
 * then the inverse CDF of the row's one uniform draw {@code r}. {@link FastDraw} must reach the same token.
 *
 * <p>Works on its {@link Sampler}'s row and is confined to that sampler's thread.
 */
final class ExactDraw {
    private final int vocab;
    /** The row's logits after min_tokens and penalties (the sampler's buffer). */
    final float[] logits;
    /** Every weight, once {@link #weighAll} ran for this row. */
    final float[] weights;
    /** Candidates, as {@link #key}s. */
    final long[] order;
    private final LogitBlocks blocks;

    // this row's
    float max;
    double invT;
    float minKeep;
    private boolean weighed;
    /** Rows that weighed every logit, and rows the definition drew (read by the tests and the benchmark). */
    long weighings;
    long draws;

    ExactDraw(float[] logits, LogitBlocks blocks) {
        this.vocab = logits.length;
        this.logits = logits;
        this.weights = new float[vocab];
        this.order = new long[vocab];
        this.blocks = blocks;
    }

    /** The largest logit, NaN ignored as the definition always has. */
    static float maxIgnoringNaN(float[] x) {
        float max = Float.NEGATIVE_INFINITY;
        for (float v : x) {
            if (v > max) {
                max = v;
            }
        }
        return max;
    }

    /** Starts a row whose largest logit is {@code max} (not -inf). */
    void begin(float max, SamplingParams p) {
        this.max = max;
        this.invT = 1.0 / p.temperature();
        this.minKeep = (float) p.minP();
        this.weighed = false;
    }

    /** The exponent of a weight: the difference in float, then a double product. */
    static double argument(float logit, float max, double invT) {
        return (logit - max) * invT;
    }

    /** A logit's weight after min-p. */
    static float weight(float logit, float max, double invT, float minKeep) {
        float w = (float) Math.exp(argument(logit, max, invT));
        return w < minKeep ? 0f : w;
    }

    float weight(float logit) {
        return weight(logit, max, invT, minKeep);
    }

    /** Positive float bits order like the floats, so keys sort by weight, then token. */
    static long key(float w, int token) {
        return ((long) Float.floatToRawIntBits(w) << 32) | token;
    }

    static float weightOf(long key) {
        return Float.intBitsToFloat((int) (key >>> 32));
    }

    /** The draw, {@code r} being the row's uniform number. */
    int draw(SamplingParams p, double r) {
        draws++;
        weighAll();
        int k = p.topK() > 0 && p.topK() < vocab ? p.topK() : 0;
        boolean nucleus = p.topP() < 1.0;
        if (k == 0 && !nucleus) {
            double sum = 0;
            for (int i = 0; i < vocab; i++) {
                sum += weights[i];
            }
            return drawLinear(sum, r);
        }
        int n = 0;
        for (int i = 0; i < vocab; i++) {
            if (weights[i] > 0f) {
                order[n++] = key(weights[i], i);
            }
        }
        Arrays.sort(order, 0, n);
        int first = k > 0 ? Math.max(0, n - k) : 0;
        if (nucleus) {
            first = nucleusStart(n, first, p.topP());
        }
        return drawSorted(n, first, r);
    }

    /** Fills {@link #weights}, {@link #weight} of every logit, unless this row's are there already. */
    void weighAll() {
        if (weighed) {
            return;
        }
        weighed = true;
        weighings++;
        if (blocks == null) {
            for (int i = 0; i < vocab; i++) {
                weights[i] = weight(logits[i]);
            }
            return;
        }
        // the block maxima are this row's (the sampler scanned them); blocks below this argument weigh 0 after min-p
        double zeroBelow = minKeep >= 0x1p-124f
                ? Math.max(LogitBlocks.UNDERFLOW, Math.log(minKeep) - 0.01) : LogitBlocks.UNDERFLOW;
        blocks.exactWeights(logits, weights, max, invT, minKeep, zeroBelow);
    }

    /** The inverse CDF in token order, {@code sum} being the weights' sum in that order. */
    private int drawLinear(double sum, double r) {
        double u = r * sum;
        double acc = 0;
        int last = 0;
        for (int i = 0; i < vocab; i++) {
            float w = weights[i];
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

    /**
     * Top-p over the sorted candidates {@code order[first..n)}: where the smallest run from the top whose weight
     * reaches {@code top_p} of theirs starts.
     */
    int nucleusStart(int n, int first, double topP) {
        double target = topP * keptWeight(n, first);
        double acc = 0;
        int j = n - 1;
        for (; j > first; j--) {
            acc += weightOf(order[j]);
            if (acc >= target) {
                break;
            }
        }
        return j;
    }

    /** The inverse CDF from the top of the sorted candidates {@code order[first..n)}. */
    int drawSorted(int n, int first, double r) {
        double u = r * keptWeight(n, first);
        double acc = 0;
        for (int j = n - 1; j >= first; j--) {
            acc += weightOf(order[j]);
            if (u < acc) {
                return (int) order[j];
            }
        }
        return (int) order[first];
    }

    /** The weight of the sorted candidates {@code order[first..n)}, summed from the top. */
    private double keptWeight(int n, int first) {
        double kept = 0;
        for (int j = n - 1; j >= first; j--) {
            kept += weightOf(order[j]);
        }
        return kept;
    }
}
