package io.strata.backend.cpu.ops;

import java.lang.foreign.MemorySegment;

/**
 * A packed FP4 e2m1 weight {@code [out, in/2]} (element 2i in the low nibble) with a ue8m0 scale per row
 * and 32 inputs: the routed experts. The activation is FP8-quantized per 128 first, as the reference's
 * {@code fp4_gemm} path does; output is bf16.
 */
public final class Fp4Linear extends QuantizedLinear {

    public Fp4Linear(MemorySegment w, MemorySegment scale, int out, int in) {
        super(w, scale, out, in, true);
        if (w.byteSize() != (long) out * in / 2 || scale.byteSize() != (long) out * (in / 32)) {
            throw new IllegalArgumentException("FP4 weight/scale sizes do not match [" + out + ", " + in + "]");
        }
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
}
