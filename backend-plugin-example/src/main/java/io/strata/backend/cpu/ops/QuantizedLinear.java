package io.strata.backend.cpu.ops;

import io.strata.model.format.ActivationQuant;
import java.lang.foreign.MemorySegment;

/**
 * A block-scaled low-precision weight (FP8 or FP4 codes plus ue8m0 scales) read straight from the mapped
 * checkpoint. What the formats share: bf16 output, the vectorized fused dot where the width allows it, and
 * the reference's per-token FP8 activation quantization (128 channels per scale) before the GEMM when the
 * layer quantizes its input.
 */
abstract class QuantizedLinear extends BlockedLinear {
    final MemorySegment w;
    final MemorySegment scale;
    private final boolean quantizeInput;
    private float[] xq = new float[0];

    QuantizedLinear(MemorySegment w, MemorySegment scale, int out, int in, boolean quantizeInput) {
        super(out, in);
        this.w = w;
        this.scale = scale;
        this.quantizeInput = quantizeInput;
    }

    @Override
    public long weightBytes() {
        return w.byteSize() + scale.byteSize();
    }

    @Override
    boolean roundOutput() {
        return true;
    }

    /** Row {@code n}, dequantized to fp32. */
    public void row(int n, float[] dst, byte[] tmp) {
        decodeRow(n, dst, 0, tmp);
    }

    @Override
    boolean hasFusedDot() {
        return VectorDecode.supports(in);
    }

    @Override
    public synchronized void forward(float[] x, int rows, float[] y) {
        float[] a = x;
        if (quantizeInput) {
            if (xq.length < rows * in) {
                xq = new float[rows * in];
            }
            System.arraycopy(x, 0, xq, 0, rows * in);
            for (int r = 0; r < rows; r++) {
                ActivationQuant.fp8RoundTrip(xq, r * in, in, ActivationQuant.GEMM_BLOCK);
            }
            a = xq;
        }
        gemm(a, rows, y);
    }
}
