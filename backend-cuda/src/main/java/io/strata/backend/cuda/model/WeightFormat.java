package io.strata.backend.cuda.model;

/**
 * How a weight matrix {@code [rows, cols]} is stored in the checkpoint and on the device (byte for byte, but for
 * FP4's bit order within 32-bit words: {@link DeviceMatrix}). The ordinals are the {@code fmt} codes of
 * {@code strata_linear.h}: do not reorder.
 */
public enum WeightFormat {
    /** bf16 {@code [rows, cols]}. */
    BF16,
    /** fp32 {@code [rows, cols]} (multiplied on the SIMT path: fp32 weights are not bf16 numbers). */
    F32,
    /** e4m3 {@code [rows, cols]} with ue8m0 scale bytes {@code [ceil(rows/128), ceil(cols/128)]}. */
    FP8_BLOCK128,
    /** e2m1 packed two per byte {@code [rows, cols/2]} (low nibble = even column), ue8m0 {@code [rows, cols/32]}. */
    FP4_BLOCK32;

    /** Whether a linear over this format FP8-round-trips its activation per 128 channels first (the reference's act_quant). */
    public boolean quantizesInput() {
        return this == FP8_BLOCK128 || this == FP4_BLOCK32;
    }

    /** Bytes of a {@code [rows, cols]} matrix's weights in this format. */
    public long weightBytes(int rows, int cols) {
        return switch (this) {
            case BF16 -> 2L * rows * cols;
            case F32 -> 4L * rows * cols;
            case FP8_BLOCK128 -> (long) rows * cols;
            case FP4_BLOCK32 -> (long) rows * cols / 2;
        };
    }

    /** Bytes of its block scales (0 for BF16 and F32). */
    public long scaleBytes(int rows, int cols) {
        return switch (this) {
            case BF16, F32 -> 0;
            case FP8_BLOCK128 -> (long) ((rows + 127) / 128) * ((cols + 127) / 128);
            case FP4_BLOCK32 -> (long) rows * (cols / 32);
        };
    }
}
