package io.strata.platform.engine.sampling;

import java.util.Arrays;

/**
 * Shortcuts to the token {@link ExactDraw} draws, with the same uniform number. Each exponentiates and sorts only
 * the logits that can matter, found through the block maxima. Where the definition sums the whole row (temperature
 * alone, top-p alone), a shortcut uses a sum whose distance from the definition's is bounded, takes a token only
 * where that bound settles it, and otherwise gives up, and the definition runs. Confined to its sampler's thread.
 */
final class FastDraw {
    /** Most logits a shortcut gathers, exponentiates one by one and sorts; twice that where it need not sort. */
    static final int MAX_SORTED = 1 << 14;
    /**
     * The bound, relative to the total, on how far a {@link LogitBlocks#boundedSums} total or running sum, or
     * {@code r} or {@code top_p} times one, lies from the definition's. Its weights are each within one float ulp
     * (2^-23) of the exact ones, or within 2^-149 below the normal range (under 2^-131 over the row, whose total
     * is at least 1, the largest logit's weight); both sums round at most once a token, under vocab × 2^-53 of the
     * total, so below 2^-25 for a vocabulary under 2^28. The distance between two such quantities, a sum and a
     * draw or a sum and a target, stays under 2^-22; this is twice that.
     */
    static final double SUM_SLACK = 0x1p-21;
    /** Weights by their float bits' top 14: 32 buckets an octave, and a bucket's weights all below the next's. */
    private static final int BUCKET_SHIFT = 18;
    private static final int TOP_BUCKET = Float.floatToRawIntBits(1f) >>> BUCKET_SHIFT;

    private final ExactDraw exact;
    private final LogitBlocks blocks;
    private final int vocab;
    private final float[] logits;
    private final long[] order;
    /** Token ids while they are gathered. */
    private final int[] ids;
    private final double[] masses = new double[TOP_BUCKET + 1];
    /** From {@link #gather}: whether nothing left out is a candidate, and the best logit left out. */
    private boolean complete;
    private float outside;

    FastDraw(ExactDraw exact, LogitBlocks blocks) {
        this.exact = exact;
        this.blocks = blocks;
        this.logits = exact.logits;
        this.vocab = logits.length;
        this.order = exact.order;
        this.ids = new int[vocab + LogitBlocks.SLACK_LANES];
    }

    /**
     * The row's token, {@code r} being its uniform number. {@link ExactDraw#begin} ran, the logits are finite or
     * -inf, and the block maxima are theirs.
     */
    int draw(SamplingParams p, double r) {
        int k = p.topK() > 0 && p.topK() < vocab ? p.topK() : 0;
        // logits below this should weigh 0 after min-p (a margin of 1% of min_p); gather checks that they do
        float minPFloor = exact.minKeep >= 0x1p-124f
                ? exact.max + (float) ((Math.log(exact.minKeep) - 0.01) * p.temperature()) : Float.NEGATIVE_INFINITY;
        int token;
        if (k > 0) {
            token = topK(k, minPFloor, p.topP(), r);
        } else if (exact.minKeep > 0f) {
            token = minP(minPFloor, p.topP(), r);
        } else if (p.topP() < 1.0) {
            token = topP(p.topP(), r);
        } else {
            token = temperatureOnly(r);
        }
        return token >= 0 ? token : exact.draw(p, r);
    }

    /** Top-k, with or without the rest: the definition's top k, gathered exactly from above the k-th block maximum. */
    private int topK(int k, float minPFloor, double topP, double r) {
        float floor = Math.max(minPFloor, k <= blocks.count ? blocks.kthLargestMaximum(k) : Float.NEGATIVE_INFINITY);
        for (int attempt = 0; attempt < 4 && floor > Float.NEGATIVE_INFINITY; attempt++) {
            int n = gatherSorted(floor);
            if (n < 0) {
                return -1;
            }
            if (complete || n >= k) {
                int first = Math.max(0, n - k);
                return exact.drawSorted(n, topP < 1.0 ? exact.nucleusStart(n, first, topP) : first, r);
            }
            floor = outside; // a weight tie across the floor: take the next logit down too
        }
        return -1;
    }

    /**
     * Min-p without top-k: the logits that can pass it are every candidate there is. Too many to sort for top-p,
     * and {@link #byHistogram} takes them.
     */
    private int minP(float floor, double topP, double r) {
        int n = floor > Float.NEGATIVE_INFINITY ? gather(floor, topP < 1.0 ? MAX_SORTED : 2 * MAX_SORTED) : -1;
        if (n < 0 || !complete) {
            return topP < 1.0 ? byHistogram(topP, r) : -1;
        }
        if (topP < 1.0) {
            Arrays.sort(order, 0, n);
            return exact.drawSorted(n, exact.nucleusStart(n, 0, topP), r);
        }
        double sum = 0; // the definition's inverse CDF in token order; it adds zeros too, which change no sum
        for (int j = 0; j < n; j++) {
            sum += ExactDraw.weightOf(order[j]);
        }
        double u = r * sum;
        double acc = 0;
        for (int j = 0; j < n; j++) {
            acc += ExactDraw.weightOf(order[j]);
            if (u < acc) {
                return (int) order[j];
            }
        }
        return (int) order[n - 1];
    }

    /**
     * Top-p alone. The definition cuts at {@code top_p} times the sum of every candidate: a head of the sorted
     * candidates is gathered exactly and the cut taken in it where no running sum lies within the slack of the
     * bounded target. With the cut below the head the nucleus weighs between the target and the target plus one
     * token below the head, which may still place the draw in the head. Else {@link #byHistogram}.
     */
    private int topP(double topP, double r) {
        double total = blocks.boundedSums(logits, exact.max, exact.invT);
        double target = topP * total, slack = total * SUM_SLACK;
        for (int heads = 64; heads <= 512; heads *= 8) {
            int n = gatherSorted(blocks.kthLargestMaximum(Math.min(heads, blocks.count)));
            if (n < 0) {
                break;
            }
            if (complete) {
                return exact.drawSorted(n, exact.nucleusStart(n, 0, topP), r);
            }
            double acc = 0;
            for (int j = n - 1; j >= 0; j--) {
                acc += ExactDraw.weightOf(order[j]);
                if (acc >= target - slack) {
                    return acc >= target + slack ? exact.drawSorted(n, j, r) : byHistogram(topP, r);
                }
            }
            double uLow = r * (target - slack), uHigh = r * (target + slack + exact.weight(outside));
            if (uHigh < acc) {
                double sum = 0;
                for (int j = n - 1; j >= 0; j--) {
                    sum += ExactDraw.weightOf(order[j]);
                    if (uLow < sum) {
                        return uHigh < sum ? (int) order[j] : byHistogram(topP, r);
                    }
                }
            }
            if (heads >= blocks.count || acc < target / 8) { // a head eight times larger is unlikely to do
                break;
            }
        }
        return byHistogram(topP, r);
    }

    /**
     * Top-p over a nucleus too large to gather: every weight exactly, their mass by bucket, and only the bucket the
     * cut falls in and the one the draw falls in sorted. The weights being exact, only rounding separates these
     * running sums from the definition's, each under (vocab + buckets) × 2^-53 of the total; the slack is four
     * times the sum of two.
     */
    private int byHistogram(double topP, double r) {
        exact.weighAll();
        float[] w = exact.weights;
        Arrays.fill(masses, 0.0);
        for (int i = 0; i < vocab; i++) {
            if (w[i] > 0f) {
                masses[bucket(w[i])] += w[i];
            }
        }
        double total = 0;
        for (int b = TOP_BUCKET; b >= 0; b--) {
            total += masses[b];
        }
        double target = topP * total, slack = total * (vocab + masses.length) * 0x1p-50;
        int b = TOP_BUCKET; // the cut: where the running sum from the top reaches the target
        double above = 0;
        for (; b > 0 && above + masses[b] < target - slack; b--) {
            above += masses[b];
        }
        int n = sortBucket(b);
        double kept = above;
        int cut = n - 1;
        for (; cut >= 0; cut--) {
            kept += ExactDraw.weightOf(order[cut]);
            if (kept >= target - slack) {
                break;
            }
        }
        if (cut < 0 || kept < target + slack) {
            return -1;
        }
        double u = r * kept;
        int d = TOP_BUCKET; // the draw: where the running sum from the top passes u, at or above the cut
        double aboveD = 0;
        for (; d > b && aboveD + masses[d] <= u; d--) {
            aboveD += masses[d];
        }
        if (d != b) {
            n = sortBucket(d);
        }
        double acc = aboveD;
        for (int j = n - 1; j >= 0; j--) {
            double before = acc;
            acc += ExactDraw.weightOf(order[j]);
            if (u < acc) {
                return u - before > slack && acc - u > slack ? (int) order[j] : -1;
            }
        }
        return -1;
    }

    private static int bucket(float w) {
        return Float.floatToRawIntBits(w) >>> BUCKET_SHIFT;
    }

    /** The weights of bucket {@code b}, sorted into {@code order[0..n)}; returns n. */
    private int sortBucket(int b) {
        float lo = b == 0 ? Float.MIN_VALUE : Float.intBitsToFloat(b << BUCKET_SHIFT);
        float hi = Float.intBitsToFloat((b + 1) << BUCKET_SHIFT);
        float[] w = exact.weights;
        int n = blocks.collect(w, 0, vocab, lo, hi, ids, 0, vocab);
        for (int j = 0; j < n; j++) {
            order[j] = ExactDraw.key(w[ids[j]], ids[j]);
        }
        Arrays.sort(order, 0, n);
        return n;
    }

    /**
     * Temperature alone: the inverse CDF in token order over block sums, each running sum within the slack of the
     * definition's; the block the draw lands in is weighed exactly, and its token taken only when the draw lies
     * farther than the slack from both ends of the token's interval.
     */
    private int temperatureOnly(double r) {
        double total = blocks.boundedSums(logits, exact.max, exact.invT);
        double u = r * total, slack = total * SUM_SLACK;
        double below = 0;
        int s = 0;
        for (; s < blocks.sumCount; s++) {
            double next = below + blocks.sums[s];
            if (u < next) {
                break;
            }
            below = next;
        }
        double acc = below;
        for (int i = s * LogitBlocks.SUM_BLOCK, hi = Math.min(vocab, i + LogitBlocks.SUM_BLOCK); i < hi; i++) {
            float w = exact.weight(logits[i]);
            if (w > 0f) {
                double before = acc;
                acc += w;
                if (u < acc) {
                    return u - before > slack && acc - u > slack ? i : -1;
                }
            }
        }
        return -1;
    }

    /**
     * Every logit at or above {@code floor} that has a positive weight, as {@link ExactDraw#key}s in token order in
     * {@code order[0..n)}. Sets {@link #outside} to the best logit below the floor and {@link #complete} to whether
     * it weighs 0, i.e. whether these are all the candidates.
     *
     * @return n, or -1 when more than {@code most} logits reach the floor
     */
    private int gather(float floor, int most) {
        float best = Float.NEGATIVE_INFINITY;
        blocks.below = Float.NEGATIVE_INFINITY;
        int n = 0;
        for (int b = 0; b < blocks.count && n >= 0; b++) {
            if (blocks.maxima[b] < floor) {
                best = Math.max(best, blocks.maxima[b]);
            } else {
                int lo = b * LogitBlocks.BLOCK;
                n = blocks.collect(logits, lo, Math.min(vocab, lo + LogitBlocks.BLOCK), floor, Float.POSITIVE_INFINITY,
                        ids, n, most);
            }
        }
        if (n < 0) {
            return -1;
        }
        best = Math.max(best, blocks.below);
        int m = 0;
        for (int j = 0; j < n; j++) {
            int token = ids[j];
            float w = exact.weight(logits[token]);
            if (w > 0f) {
                order[m++] = ExactDraw.key(w, token);
            }
        }
        outside = best;
        complete = exact.weight(best) == 0f;
        return m;
    }

    /**
     * {@link #gather}, sorted as the definition sorts, less any at the bottom that weigh no more than the best logit
     * left out (a tie the definition may break either way): {@code order[0..n)} is then the definition's top n.
     */
    private int gatherSorted(float floor) {
        int m = gather(floor, MAX_SORTED);
        if (m < 0) {
            return -1;
        }
        Arrays.sort(order, 0, m);
        float wOut = exact.weight(outside);
        int tied = 0;
        while (tied < m && ExactDraw.weightOf(order[tied]) <= wOut) {
            tied++;
        }
        System.arraycopy(order, tied, order, 0, m - tied);
        return m - tied;
    }
}
