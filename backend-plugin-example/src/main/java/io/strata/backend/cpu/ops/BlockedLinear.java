package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The shared GEMM loop of the weight formats: weight rows are dequantized to fp32 four at a time (each
 * weight byte is read once per call, whatever the batch), and every activation row is dotted with the
 * four at once so an activation load feeds four FMAs. Parallel over blocks of output rows.
 */
abstract class BlockedLinear implements Linear {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final int BLOCK = 4;
    final int in;
    final int out;

    BlockedLinear(int out, int in) {
        this.in = in;
        this.out = out;
    }

    @Override
    public int inFeatures() {
        return in;
    }

    @Override
    public int outFeatures() {
        return out;
    }

    /** Dequantizes weight row {@code n} into {@code dst[dstOff .. dstOff+in)}. */
    abstract void decodeRow(int n, float[] dst, int dstOff, byte[] tmp);

    /**
     * The dot of one activation row with weight row {@code n} read straight from its bytes, or NaN when the
     * format has no fused path; must give the same bits as {@link #decodeRow} followed by a dot.
     */
    float fusedDot(int n, float[] x, int xOff) {
        return Float.NaN;
    }

    /** Whether {@link #fusedDot} is implemented for this weight. */
    boolean hasFusedDot() {
        return false;
    }

    /** Whether the output is rounded to bf16 (every linear but the fp32 ones). */
    abstract boolean roundOutput();

    /** Computes {@code y = act · Wᵀ} for {@code rows} activation rows (already quantized if the format wants). */
    final void gemm(float[] act, int rows, float[] y) {
        if (rows == 1 && hasFusedDot()) {
            // decode: every weight byte is used once, so stream it straight into the FMAs
            boolean round = roundOutput();
            Parallel.range(out, Math.max(1, 16384 / Math.max(1, in)), (from, to) -> {
                for (int n = from; n < to; n++) {
                    float v = fusedDot(n, act, 0);
                    y[n] = round ? Bf16.round(v) : v;
                }
            });
            return;
        }
        int blocks = (out + BLOCK - 1) / BLOCK;
        int minBlocks = Math.max(1, 16384 / Math.max(1, in * rows * BLOCK));
        Parallel.range(blocks, minBlocks, (from, to) -> {
            float[] w = new float[BLOCK * in];
            byte[] tmp = new byte[in];
            float[] r4 = new float[BLOCK];
            boolean round = roundOutput();
            for (int b = from; b < to; b++) {
                int n0 = b * BLOCK;
                int nb = Math.min(BLOCK, out - n0);
                for (int j = 0; j < nb; j++) {
                    decodeRow(n0 + j, w, j * in, tmp);
                }
                for (int r = 0; r < rows; r++) {
                    if (nb == BLOCK) {
                        dot4(act, r * in, w, in, r4);
                    } else {
                        for (int j = 0; j < nb; j++) {
                            r4[j] = VectorMath.dot(act, r * in, w, j * in, in);
                        }
                    }
                    for (int j = 0; j < nb; j++) {
                        y[r * out + n0 + j] = round ? Bf16.round(r4[j]) : r4[j];
                    }
                }
            }
        });
    }

    /** Four dot products of one activation row with four consecutive weight rows; fixed lane order. */
    static void dot4(float[] x, int xOff, float[] w, int n, float[] res) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F);
        FloatVector a3 = FloatVector.zero(F);
        int i = 0;
        int upper = F.loopBound(n);
        for (; i < upper; i += F.length()) {
            FloatVector xv = FloatVector.fromArray(F, x, xOff + i);
            a0 = xv.fma(FloatVector.fromArray(F, w, i), a0);
            a1 = xv.fma(FloatVector.fromArray(F, w, n + i), a1);
            a2 = xv.fma(FloatVector.fromArray(F, w, 2 * n + i), a2);
            a3 = xv.fma(FloatVector.fromArray(F, w, 3 * n + i), a3);
        }
        float s0 = VectorMath.sumLanes(a0);
        float s1 = VectorMath.sumLanes(a1);
        float s2 = VectorMath.sumLanes(a2);
        float s3 = VectorMath.sumLanes(a3);
        for (; i < n; i++) {
            s0 += x[xOff + i] * w[i];
            s1 += x[xOff + i] * w[n + i];
            s2 += x[xOff + i] * w[2 * n + i];
            s3 += x[xOff + i] * w[3 * n + i];
        }
        res[0] = s0;
        res[1] = s1;
        res[2] = s2;
        res[3] = s3;
    }
}
