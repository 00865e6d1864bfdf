package io.strata.backend.cpu.ops;

import io.strata.model.format.ActivationQuant;
import java.lang.foreign.MemorySegment;

/**
 * A packed FP4 e2m1 weight {@code [out, in/2]} (element 2i in the low nibble) with a ue8m0 scale per row
 * and 32 inputs: the routed experts. The activation is FP8-quantized per 128 first, as the reference's
 * {@code fp4_gemm} path does; output is bf16.
 */
public final class Fp4Linear extends BlockedLinear {
    private final MemorySegment w;
    private final MemorySegment scale;
    private float[] xq = new float[0];

    public Fp4Linear(MemorySegment w, MemorySegment scale, int out, int in) {
        super(out, in);
        if (w.byteSize() != (long) out * in / 2 || scale.byteSize() != (long) out * (in / 32)) {
            throw new IllegalArgumentException("FP4 weight/scale sizes do not match [" + out + ", " + in + "]");
        }
        this.w = w;
        this.scale = scale;
    }

    @Override
    public long weightBytes() {
        return w.byteSize() + scale.byteSize();
    }

    @Override
    boolean roundOutput() {
        return true;
    }

    public void row(int n, float[] dst, byte[] tmp) {
        decodeRow(n, dst, 0, tmp);
    }

    @Override
    boolean hasFusedDot() {
        return VectorDecode.supports(in);
    }

    @Override
    float fusedDot(int n, float[] x, int xOff) {
        return VectorDecode.supports(in)
            ? VectorDecode.fp4Dot(w, (long) n * in / 2, scale, (long) n * (in / 32), in, x, xOff) : Float.NaN;
    }

    @Override
    void decodeRow(int n, float[] dst, int dstOff, byte[] tmp) {
        if (VectorDecode.supports(in)) {
            VectorDecode.fp4Row(w, (long) n * in / 2, scale, (long) n * (in / 32), in, dst, dstOff);
        } else {
            WeightDecode.fp4Row(w, (long) n * in / 2, scale, (long) n * (in / 32), in, dst, dstOff, tmp);
        }
    }

    @Override
    public synchronized void forward(float[] x, int rows, float[] y) {
        if (xq.length < rows * in) {
            xq = new float[rows * in];
        }
        System.arraycopy(x, 0, xq, 0, rows * in);
        for (int r = 0; r < rows; r++) {
            ActivationQuant.fp8RoundTrip(xq, r * in, in, 128);
        }
        gemm(xq, rows, y);
    }
}
