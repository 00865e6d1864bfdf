package io.strata.model.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Dequantization of the checkpoint's block-scaled weights, one row at a time (rows = output channels).
 * <ul>
 *   <li>FP8: weight e4m3 [rows, cols], scale e8m0 [ceil(rows/128), ceil(cols/128)]; w = e4m3 · 2^(s−127).</li>
 *   <li>FP4: weight packed e2m1 [rows, cols/2] (low nibble = even column), scale e8m0 [rows, cols/32].</li>
 * </ul>
 * Power-of-two scales make every result exact in float32.
 */
public final class BlockDequant {

    public static final int FP8_WEIGHT_BLOCK = 128;
    public static final int FP4_WEIGHT_GROUP = 32;

    private BlockDequant() {
    }

    /** Scale-grid shape of an FP8 weight of shape [rows, cols]. */
    public static int[] fp8ScaleShape(int rows, int cols) {
        return new int[] {ceilDiv(rows, FP8_WEIGHT_BLOCK), ceilDiv(cols, FP8_WEIGHT_BLOCK)};
    }

    /** Scale shape of an FP4 weight with {@code cols} logical columns. */
    public static int[] fp4ScaleShape(int rows, int cols) {
        return new int[] {rows, ceilDiv(cols, FP4_WEIGHT_GROUP)};
    }

    /** Dequantizes row {@code row} of an FP8 weight into {@code dst[0, cols)}. */
    public static void fp8Row(MemorySegment weight, MemorySegment scale, int cols, int row, float[] dst) {
        int scaleCols = ceilDiv(cols, FP8_WEIGHT_BLOCK);
        long scaleRow = (long) (row / FP8_WEIGHT_BLOCK) * scaleCols;
        long base = (long) row * cols;
        for (int cb = 0; cb < scaleCols; cb++) {
            float s = E8m0.decode(scale.get(ValueLayout.JAVA_BYTE, scaleRow + cb));
            int end = Math.min(cols, (cb + 1) * FP8_WEIGHT_BLOCK);
            for (int c = cb * FP8_WEIGHT_BLOCK; c < end; c++) {
                dst[c] = Fp8E4m3.decode(weight.get(ValueLayout.JAVA_BYTE, base + c)) * s;
            }
        }
    }

    /** Dequantizes row {@code row} of a packed FP4 weight with {@code cols} logical columns into {@code dst}. */
    public static void fp4Row(MemorySegment packed, MemorySegment scale, int cols, int row, float[] dst) {
        int groups = ceilDiv(cols, FP4_WEIGHT_GROUP);
        long scaleBase = (long) row * groups;
        long base = (long) row * (cols / 2);
        for (int g = 0; g < groups; g++) {
            float s = E8m0.decode(scale.get(ValueLayout.JAVA_BYTE, scaleBase + g));
            int end = Math.min(cols, (g + 1) * FP4_WEIGHT_GROUP);
            for (int c = g * FP4_WEIGHT_GROUP; c < end; c += 2) {
                int b = packed.get(ValueLayout.JAVA_BYTE, base + c / 2) & 0xFF;
                dst[c] = Fp4E2m1.pairLow(b) * s;
                dst[c + 1] = Fp4E2m1.pairHigh(b) * s;
            }
        }
    }

    static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }
}
