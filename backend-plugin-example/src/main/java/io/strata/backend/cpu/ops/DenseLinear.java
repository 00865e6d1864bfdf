package io.strata.backend.cpu.ops;

import io.strata.backend.cpu.weights.Layouts;

import java.lang.foreign.MemorySegment;

/**
 * A BF16 or F32 weight matrix {@code [out, in]} multiplied in fp32. {@code roundOutput} reproduces a
 * bf16 {@code F.linear} (fp32 accumulate, bf16 result); without it this is the reference's fp32 linear
 * (compressor projections, router, head), whose bf16 checkpoint weights are cast to fp32 exactly.
 */
public final class DenseLinear extends BlockedLinear {
    private final MemorySegment w;
    private final boolean bf16Weights;
    private final boolean roundOutput;

    public DenseLinear(MemorySegment w, boolean bf16Weights, int out, int in, boolean roundOutput) {
        super(out, in);
        long need = (long) out * in * (bf16Weights ? 2 : 4);
        if (w.byteSize() != need) {
            throw new IllegalArgumentException("weight has " + w.byteSize() + " bytes, expected " + need);
        }
        this.w = w;
        this.bf16Weights = bf16Weights;
        this.roundOutput = roundOutput;
    }

    @Override
    public long weightBytes() {
        return w.byteSize();
    }

    @Override
    boolean roundOutput() {
        return roundOutput;
    }

    /** Row {@code n} of the weight as fp32. */
    public void row(int n, float[] dst) {
        decodeRow(n, dst, 0, null);
    }

    @Override
    boolean hasFusedDot() {
        return bf16Weights && VectorDecode.supports(in);
    }

    @Override
    float fusedDot(int n, float[] x, int xOff) {
        return bf16Weights && VectorDecode.supports(in)
            ? VectorDecode.bf16Dot(w, (long) n * in * 2, in, x, xOff) : Float.NaN;
    }

    @Override
    void decodeRow(int n, float[] dst, int dstOff, byte[] tmp) {
        if (!bf16Weights) {
            MemorySegment.copy(w, Layouts.FLOAT, (long) n * in * 4, dst, dstOff, in);
        } else if (VectorDecode.supports(in)) {
            VectorDecode.bf16Row(w, (long) n * in * 2, in, dst, dstOff);
        } else {
            WeightDecode.bf16Row(w, (long) n * in * 2, in, dst, dstOff);
        }
    }

    @Override
    public void forward(float[] x, int rows, float[] y) {
        gemm(x, rows, y);
    }
}
