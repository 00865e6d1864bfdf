package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;

/**
 * Linear layers on the device, numerically the CPU backend's {@code DenseLinear} / {@code Fp8Linear} /
 * {@code Fp4Linear}: fp32 accumulation of exact products (every dequantized weight and every activation is a
 * bf16 number; F32 weights take an fp32 SIMT path), FP8/FP4 weights FP8-round-trip the activation per 128
 * channels first, output bf16 (round to nearest even) or fp32. Only the summation order differs from the CPU.
 *
 * <p>Addresses are device pointers; {@code stream} is a {@code cudaStream_t} (0 = the legacy default stream).
 * Nothing synchronises and nothing allocates, so calls can be captured in a CUDA graph. Requirements: x
 * 16-byte aligned, {@code lda % 8 == 0}, in features {@code % 8 == 0} ({@code % 128} for FP8/FP4).
 */
public final class LinearKernels {
    private LinearKernels() {
    }

    /**
     * Workspace of {@link #linear} and {@link #grouped} for {@code m} rows of {@code in} features in all (enough for
     * every format): FP8/FP4 weights at decode sizes FP8-round-trip x into it; FP8 weights at more rows stage x
     * there as f16 quotients and their powers of two per 128 channels ({@code strata_linear.h}).
     */
    public static long workspaceBytes(int m, int in) {
        return align(2L * m * in) + align(4L * ((m + 3) / 4 * 4) * ((in + 127) / 128));
    }

    /**
     * {@code y[m, rows] = x[m, cols] · Wᵀ}: x bf16 with row stride {@code lda} elements, y bf16 ({@code bf16Out})
     * or fp32 with row stride {@code ldy}. {@code workspace}: {@link #workspaceBytes}{@code (m, cols)} bytes,
     * used by FP8/FP4 weights only (may be 0 for BF16/F32).
     */
    public static void linear(DeviceMatrix w, long x, int lda, int m, long y, int ldy, boolean bf16Out, long workspace,
                              long stream) {
        boolean quantize = w.format().quantizesInput();
        if (quantize && w.cols() % 128 != 0) {
            throw new IllegalArgumentException("FP8/FP4 linear needs in features % 128 == 0, got " + w.cols());
        }
        run(w, 1, x, lda, m, y, ldy, bf16Out, quantize, workspace, stream);
    }

    /**
     * As {@link #linear}, with x's FP8 round trip already computed ({@code xq}, e.g. by the norm that wrote x, with x's
     * row stride; 0: not computed): FP8/FP4 weights read {@code xq} and round-trip nothing, which gives what they would
     * compute from x (the round trip of a round-tripped row is itself); BF16/F32 weights read {@code x}.
     */
    public static void linearRounded(DeviceMatrix w, long x, long xq, int lda, int m, long y, int ldy, boolean bf16Out,
                                     long workspace, long stream) {
        if (xq == 0 || !w.format().quantizesInput()) {
            linear(w, x, lda, m, y, ldy, bf16Out, workspace, stream);
            return;
        }
        if (w.cols() % 128 != 0) {
            throw new IllegalArgumentException("FP8/FP4 linear needs in features % 128 == 0, got " + w.cols());
        }
        run(w, 1, xq, lda, m, y, ldy, bf16Out, false, workspace, stream);
    }

    /**
     * V4's {@code wo_a}: W is {@code [groups·oLora, groupIn]}; group g computes
     * {@code y[:, g·oLora + j] = x[:, g·groupIn .. (g+1)·groupIn) · W[g·oLora + j, :]}. No activation
     * quantization (the converter dequantizes an FP8 {@code wo_a}), bf16 out. BF16 or FP8 ({@code oLora % 128 == 0}).
     * {@code workspace}: {@link #workspaceBytes}{@code (m, groups · in)} bytes, used by FP8 weights.
     */
    public static void grouped(DeviceMatrix w, int groups, long x, int lda, int m, long y, int ldy, long workspace,
                               long stream) {
        if (groups < 1 || w.rows() % groups != 0) {
            throw new IllegalArgumentException(w.rows() + " output rows do not split into " + groups + " groups");
        }
        int oLora = w.rows() / groups;
        switch (w.format()) {
            case BF16 -> { }
            case FP8_BLOCK128 -> {
                if (oLora % 128 != 0) {
                    throw new IllegalArgumentException("FP8 wo_a needs o_lora_rank % 128 == 0, got " + oLora);
                }
            }
            default -> throw new IllegalArgumentException("grouped linear supports BF16 and FP8, not " + w.format());
        }
        DeviceMatrix perGroup = w.reshaped(oLora, w.cols());
        run(perGroup, groups, x, lda, m, y, ldy, true, false, workspace, stream);
    }

    /**
     * The launch behind both, with the quantization decided by the caller (the MoE quantizes x once for many);
     * {@code workspace} as {@link #workspaceBytes}, needed by FP8/FP4 weights (may be 0 for BF16/F32).
     */
    static void run(DeviceMatrix w, int groups, long x, int lda, int m, long y, int ldy, boolean bf16Out,
                    boolean quantize, long workspace, long stream) {
        if (m < 0 || lda < groups * w.cols() || ldy < groups * w.rows()) {
            throw new IllegalArgumentException("bad linear shape: m=" + m + ", lda=" + lda + ", ldy=" + ldy + " for "
                + groups + " x [" + w.rows() + ", " + w.cols() + "]");
        }
        if (w.format().quantizesInput() && m > 0 && workspace == 0) {
            throw new IllegalArgumentException("an FP8/FP4 linear needs a workspace of workspaceBytes(m, in)");
        }
        if (w.cols() % 8 != 0 || lda % 8 != 0 || (x & 15) != 0) {
            throw new IllegalArgumentException("linear needs in features % 8 == 0, lda % 8 == 0 and a 16-byte aligned x"
                + " (in=" + w.cols() + ", lda=" + lda + ")");
        }
        CudaRuntime.check(CudaNative.strata_linear(w.fmtCode(), w.weight(), w.scale(), w.rows(), w.cols(),
            groups, x, lda, m, y, ldy, bf16Out ? 1 : 0, quantize ? 1 : 0, workspace, stream), "strata_linear");
    }

    static long align(long bytes) {
        return (bytes + 255) / 256 * 256;
    }
}
