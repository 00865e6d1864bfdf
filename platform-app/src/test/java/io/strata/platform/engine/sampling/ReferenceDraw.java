package io.strata.platform.engine.sampling;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * The non-greedy draw as {@link Sampler} did it before its shortcuts (commit a97a68d), kept verbatim as the
 * reference the tests and the benchmark compare with: every weight through {@link Math#exp}, every candidate
 * sorted with {@link Arrays#sort}. Takes the penalised logits and overwrites them.
 */
final class ReferenceDraw {
    private final int vocab;
    private final long[] order;

    ReferenceDraw(int vocab) {
        this.vocab = vocab;
        this.order = new long[vocab];
    }

    int draw(float[] work, SamplingParams p, RandomGenerator rng) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            if (work[i] > max) {
                max = work[i];
            }
        }
        if (max == Float.NEGATIVE_INFINITY) {
            return argmax(work);
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
            return drawLinear(work, sum, rng);
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

    private int drawLinear(float[] work, double sum, RandomGenerator rng) {
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

    private int argmax(float[] work) {
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
}
