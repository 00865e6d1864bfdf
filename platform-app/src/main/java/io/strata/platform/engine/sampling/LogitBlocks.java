package io.strata.platform.engine.sampling;

import io.strata.spi.exec.StepResult;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The Vector API passes over one row that let {@link FastDraw} skip most of the exact work: each block's largest
 * logit, and the row's weights {@code w = (float) Math.exp((x - max) * invT)}, summed within a proven bound or
 * computed exactly. Confined to its sampler's thread; used only when the {@code jdk.incubator.vector} module is
 * present.
 *
 * <p>A lane's weight is the same expression as {@link ExactDraw#weight}: {@code x - max} in float, widened, times
 * {@code invT} in double (so the argument is bit for bit the scalar one), then {@code EXP} in double and a narrowing
 * to float. {@code EXP}, like {@link Math#exp}, is within 1 ulp of the exact value, so the two doubles are
 * neighbours and their floats differ by at most one float ulp, and only where a float rounding midpoint lies
 * between them.
 */
final class LogitBlocks {
    /** Logits per block of {@link #maxima}. */
    static final int BLOCK = 64;
    /** Logits per entry of {@link #sums}: a multiple of {@link #BLOCK}. */
    static final int SUM_BLOCK = 256;
    /** Below this argument of exp every weight rounds to float zero (e^-104 < 2^-150, half the least subnormal). */
    static final double UNDERFLOW = -104;

    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** As many float lanes as {@link #D} has double lanes (where {@link #supported}). */
    private static final VectorSpecies<Float> F =
            VectorSpecies.of(float.class, VectorShape.forBitSize(Math.max(64, D.vectorBitSize() / 2)));
    private static final VectorSpecies<Float> FM = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, FM.vectorShape());
    private static final IntVector IOTA = IntVector.zero(I).addIndex(1);
    /** Lanes {@link #collect} may write past its count. */
    static final int SLACK_LANES = FM.length();
    /** The bits of a double that narrowing to a (normal) float drops, and the value of theirs that is a midpoint. */
    private static final long DROPPED = (1L << 29) - 1, MIDPOINT = 1L << 28;
    /**
     * Between these, narrowing rounds on the 2^-149 grid of the subnormals (and of the lowest normal octave), where
     * {@link #DROPPED} says nothing; below the first it gives 0 whatever the last ulp.
     */
    private static final long TINY_FROM = Double.doubleToRawLongBits(0x1p-151), TINY_TO = Double.doubleToRawLongBits(0x1p-125);

    /** True where the vector shapes this class needs exist. */
    static boolean supported() {
        return D.length() >= 2 && D.vectorBitSize() >= 128;
    }

    final int length;
    final int count;
    final int sumCount;
    /** The largest logit of each block of {@link #BLOCK}, from {@link #scanMaxima}. */
    final float[] maxima;
    /** The weights of each block of {@link #SUM_BLOCK}, from {@link #boundedSums}. */
    final double[] sums;
    /** From {@link #collect}: the largest value it passed over below its range. */
    float below;
    private final float[] selectScratch;

    LogitBlocks(int length) {
        this.length = length;
        this.count = (length + BLOCK - 1) / BLOCK;
        this.sumCount = (length + SUM_BLOCK - 1) / SUM_BLOCK;
        this.maxima = new float[count];
        this.sums = new double[sumCount];
        this.selectScratch = new float[count];
    }

    /** Copies a row of {@code length} floats from {@code src} at byte {@code offset} into {@code x} and scans it. */
    float copyScanningMaxima(MemorySegment src, long offset, float[] x) {
        float max = Float.NEGATIVE_INFINITY;
        for (int b = 0; b < count; b++) {
            int lo = b * BLOCK, hi = Math.min(length, lo + BLOCK);
            float m = Float.NEGATIVE_INFINITY;
            if (hi - lo == BLOCK) {
                FloatVector v = FloatVector.fromMemorySegment(FM, src, offset + 4L * lo, ByteOrder.nativeOrder());
                v.intoArray(x, lo);
                for (int i = lo + FM.length(); i < hi; i += FM.length()) {
                    FloatVector next = FloatVector.fromMemorySegment(FM, src, offset + 4L * i, ByteOrder.nativeOrder());
                    next.intoArray(x, i);
                    v = v.max(next);
                }
                m = v.reduceLanes(VectorOperators.MAX);
            } else {
                MemorySegment.copy(src, StepResult.FLOAT, offset + 4L * lo, x, lo, hi - lo);
                for (int i = lo; i < hi; i++) {
                    m = Math.max(m, x[i]);
                }
            }
            maxima[b] = m;
            max = Math.max(max, m);
        }
        return max;
    }

    /** Fills {@link #maxima}; returns the largest logit, or NaN if any logit is NaN. */
    float scanMaxima(float[] x) {
        float max = Float.NEGATIVE_INFINITY;
        for (int b = 0; b < count; b++) {
            int lo = b * BLOCK, hi = Math.min(length, lo + BLOCK);
            float m = Float.NEGATIVE_INFINITY;
            if (hi - lo == BLOCK) {
                FloatVector v = FloatVector.fromArray(FM, x, lo);
                for (int i = lo + FM.length(); i < hi; i += FM.length()) {
                    v = v.max(FloatVector.fromArray(FM, x, i));
                }
                m = v.reduceLanes(VectorOperators.MAX);
            } else {
                for (int i = lo; i < hi; i++) {
                    m = Math.max(m, x[i]);
                }
            }
            maxima[b] = m;
            max = Math.max(max, m);
        }
        return max;
    }

    /** The k-th largest block maximum (1 ≤ k ≤ count): at least k logits are at or above it. */
    float kthLargestMaximum(int k) {
        float[] a = selectScratch;
        System.arraycopy(maxima, 0, a, 0, count);
        int target = count - k, lo = 0, hi = count - 1;
        while (lo < hi) { // Hoare quickselect: afterwards a[target] is where an ascending sort would put it
            float pivot = a[(lo + hi) >>> 1];
            int i = lo, j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    float t = a[i];
                    a[i++] = a[j];
                    a[j--] = t;
                }
            }
            if (target <= j) {
                hi = j;
            } else if (target >= i) {
                lo = i;
            } else {
                break;
            }
        }
        return a[target];
    }

    /**
     * Appends to {@code out[n..]} the index of every {@code x[i]} in {@code [lo, hi)}, {@code i} in
     * {@code [from, to)}, in order, and raises {@link #below} to the largest value under {@code lo} it sees. The
     * values are not NaN; {@code out} has room for {@code most} plus a vector's lanes.
     *
     * @return the new n, or -1 once it passes {@code most}
     */
    int collect(float[] x, int from, int to, float lo, float hi, int[] out, int n, int most) {
        FloatVector under = FloatVector.broadcast(FM, Float.NEGATIVE_INFINITY);
        int i = from;
        for (; i + FM.length() <= to && n <= most; i += FM.length()) {
            FloatVector v = FloatVector.fromArray(FM, x, i);
            VectorMask<Float> low = v.lt(lo);
            under = under.max(v.blend(Float.NEGATIVE_INFINITY, low.not()));
            VectorMask<Float> in = low.not().and(v.lt(hi));
            if (in.anyTrue()) {
                IOTA.add(i).compress(in.cast(I)).intoArray(out, n);
                n += in.trueCount();
            }
        }
        float m = under.reduceLanes(VectorOperators.MAX);
        for (; i < to && n <= most; i++) {
            if (x[i] < lo) {
                m = Math.max(m, x[i]);
            } else if (x[i] < hi) {
                out[n++] = i;
            }
        }
        below = Math.max(below, m);
        return n <= most ? n : -1;
    }

    /**
     * Fills {@link #sums} with each block's weights (no min-p) and returns their total. Every weight is within one
     * float ulp of the exact one (2^-23 of it, or 2^-149 below the normal range), and the sums are rounded in
     * an order of their own: see {@link FastDraw#SUM_SLACK} for the bound that follows.
     */
    double boundedSums(float[] x, float max, double invT) {
        double total = 0;
        int perSum = SUM_BLOCK / BLOCK;
        for (int s = 0; s < sumCount; s++) {
            DoubleVector acc = DoubleVector.zero(D);
            double tail = 0;
            for (int b = s * perSum; b < Math.min(count, (s + 1) * perSum); b++) {
                if (ExactDraw.argument(maxima[b], max, invT) < UNDERFLOW) {
                    continue;
                }
                int i = b * BLOCK, hi = Math.min(length, i + BLOCK);
                for (; i + D.length() <= hi; i += D.length()) {
                    acc = acc.add(exp(x, i, max, invT).convertShape(VectorOperators.D2F, F, 0)
                            .convertShape(VectorOperators.F2D, D, 0));
                }
                for (; i < hi; i++) {
                    tail += ExactDraw.weight(x[i], max, invT, 0f);
                }
            }
            sums[s] = acc.reduceLanes(VectorOperators.ADD) + tail;
            total += sums[s];
        }
        return total;
    }

    /**
     * Fills {@code w} with the weight of every logit, {@link ExactDraw#weight} bit for bit: blocks whose maximum is
     * below {@code zeroBelow} (an argument under which every weight is 0 after min-p) get zeros, lanes whose double
     * lies near a float rounding midpoint or on the subnormal grid are recomputed with {@link Math#exp}.
     */
    void exactWeights(float[] x, float[] w, float max, double invT, float minKeep, double zeroBelow) {
        for (int b = 0; b < count; b++) {
            int i = b * BLOCK, hi = Math.min(length, i + BLOCK);
            if (ExactDraw.argument(maxima[b], max, invT) < zeroBelow) {
                Arrays.fill(w, i, hi, 0f);
                continue;
            }
            for (; i + D.length() <= hi; i += D.length()) {
                DoubleVector e = exp(x, i, max, invT);
                LongVector bits = e.reinterpretAsLongs();
                boolean unsure = bits.and(DROPPED).sub(MIDPOINT).abs().compare(VectorOperators.LE, 8)
                        .or(bits.compare(VectorOperators.GE, TINY_FROM).and(bits.compare(VectorOperators.LT, TINY_TO)))
                        .anyTrue();
                if (unsure) {
                    for (int j = i; j < i + D.length(); j++) {
                        w[j] = ExactDraw.weight(x[j], max, invT, minKeep);
                    }
                    continue;
                }
                FloatVector v = (FloatVector) e.convertShape(VectorOperators.D2F, F, 0);
                v.blend(0f, v.lt(minKeep)).intoArray(w, i);
            }
            for (; i < hi; i++) {
                w[i] = ExactDraw.weight(x[i], max, invT, minKeep);
            }
        }
    }

    /** exp((x[i..] - max) * invT) in double lanes, the argument exactly as {@link ExactDraw#argument} forms it. */
    private static DoubleVector exp(float[] x, int i, float max, double invT) {
        DoubleVector arg = (DoubleVector) FloatVector.fromArray(F, x, i).sub(max).convertShape(VectorOperators.F2D, D, 0);
        return arg.mul(invT).lanewise(VectorOperators.EXP);
    }
}
