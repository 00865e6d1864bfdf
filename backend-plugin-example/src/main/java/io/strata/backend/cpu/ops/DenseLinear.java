package io.strata.backend.cpu.ops;

import io.strata.backend.cpu.weights.Layouts;

import java.lang.foreign.MemorySegment;

/**
 * A BF16 or F32 weight matrix {@code [out, in]} multiplied in fp32. {@code roundOutput} reproduces a
 * bf16 {@code F.linear} (fp32 accumulate, bf16 result); without it this is the reference's fp32 linear
 * (compressor projections, router, head), whose bf16 checkpoint weights are cast to fp32 exactly.
 */
public final class DenseLinear implements Linear {
    private final MemorySegment w;
    private final boolean bf16Weights;
    private final int in;
    private final int out;
    private final boolean roundOutput;

    public DenseLinear(MemorySegment w, boolean bf16Weights, int out, int in, boolean roundOutput) {
        long need = (long) out * in * (bf16Weights ? 2 : 4);
        if (w.byteSize() != need) {
            throw new IllegalArgumentException("weight has " + w.byteSize() + " bytes, expected " + need);
        }
        this.w = w;
        this.bf16Weights = bf16Weights;
        this.in = in;
        this.out = out;
        this.roundOutput = roundOutput;
    }

    @Override
    public int inFeatures() {
        return in;
    }

    @Override
    public int outFeatures() {
        return out;
    }

    @Override
    public long weightBytes() {
        return w.byteSize();
    }

    /** Row {@code n} of the weight as fp32. */
    public void row(int n, float[] dst) {
        if (bf16Weights) {
            WeightDecode.bf16Row(w, (long) n * in * 2, in, dst);
        } else {
            MemorySegment.copy(w, Layouts.FLOAT, (long) n * in * 4, dst, 0, in);
        }
    }

    @Override
    public void forward(float[] x, int rows, float[] y) {
        Parallel.range(out, Math.max(1, 8192 / Math.max(1, in * rows)) * 4, (from, to) -> {
            float[] wr = new float[in];
            for (int n = from; n < to; n++) {
                row(n, wr);
                for (int r = 0; r < rows; r++) {
                    float v = VectorMath.dot(x, r * in, wr, 0, in);
                    y[r * out + n] = roundOutput ? Bf16.round(v) : v;
                }
            }
        });
    }
}
