package io.strata.backend.cpu.ops;

import java.lang.foreign.MemorySegment;

/**
 * An FP8 e4m3 weight {@code [out, in]} with ue8m0 scales per 128×128 block. With {@code quantizeInput},
 * the activation is first FP8-quantized per 128 channels (the reference's {@code act_quant} before
 * {@code fp8_gemm}); the fp32 products of the dequantized operands equal the kernel's scaled partial
 * sums up to summation order. Without it, this is {@code wo_a}: dequantized to bf16 by the converter
 * and used in a bf16 einsum. Output is bf16.
 */
public final class Fp8Linear extends QuantizedLinear {
    private final int scaleCols;

    public Fp8Linear(MemorySegment w, MemorySegment scale, int out, int in, boolean quantizeInput) {
        super(w, scale, out, in, quantizeInput);
        this.scaleCols = (in + 127) / 128;
        if (w.byteSize() != (long) out * in || scale.byteSize() != (long) ((out + 127) / 128) * scaleCols) {
            throw new IllegalArgumentException("FP8 weight/scale sizes do not match [" + out + ", " + in + "]");
        }
    }

    @Override
    float fusedDot(int n, float[] x, int xOff) {
        return VectorDecode.supports(in)
            ? VectorDecode.fp8Dot(w, (long) n * in, scale, (long) (n / 128) * scaleCols, in, x, xOff) : Float.NaN;
    }

    @Override
    void decodeRow(int n, float[] dst, int dstOff, byte[] tmp) {
        if (VectorDecode.supports(in)) {
            VectorDecode.fp8Row(w, (long) n * in, scale, (long) (n / 128) * scaleCols, in, dst, dstOff);
        } else {
            WeightDecode.fp8Row(w, (long) n * in, scale, (long) (n / 128) * scaleCols, in, dst, dstOff, tmp);
        }
    }
}
