package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.checkpoint.TensorSet;

/**
 * A weight matrix on the device: {@code rows} output features by {@code cols} input features. {@code weight} and
 * {@code scale} are device addresses ({@code scale} is 0 for BF16 and F32). The bytes are the checkpoint's, except
 * that FP4 weights have the bits of every 32-bit word permuted into the layout the kernels decode fastest
 * ({@code strata_fp4_prepare}); {@code ordinaryScales} says every FP4 scale byte is a power of two in 1..254, so
 * the kernels need not check for 0 and 255.
 */
public record DeviceMatrix(WeightFormat format, long weight, long scale, int rows, int cols, boolean ordinaryScales) {

    /** The {@code fmt} code of {@code strata_linear.h}: the format's ordinal, plus the ordinary-scales flag. */
    public int fmtCode() {
        return format.ordinal() | (ordinaryScales ? 0x100 : 0);  // only FP4 matrices are ever marked
    }

    /** {@code {prefix}.weight} (+ {@code {prefix}.scale}) of an {@code [out, in]} linear; the dtype decides the format. */
    public static DeviceMatrix load(WeightStore store, TensorSet ckpt, String prefix, int out, int in) {
        return upload(store, MatrixTensors.linear(ckpt, prefix, out, in), out, in);
    }

    /** A BF16 or F32 weight named in full, e.g. {@code head.weight} or {@code layers.0.ffn.gate.weight}. */
    public static DeviceMatrix loadTensor(WeightStore store, TensorSet ckpt, String name, int out, int in) {
        return upload(store, MatrixTensors.dense(ckpt, name, out, in), out, in);
    }

    /**
     * Checkpoint bytes already copied to the device as the kernels' matrix: {@code count} {@code [rows, cols]}
     * matrices back to back (their scales likewise). FP4 weights are rearranged in place.
     */
    public static DeviceMatrix ofCheckpointBytes(WeightFormat format, long weight, long scale, int rows, int cols,
                                                 int count) {
        boolean ordinary = false;
        if (format == WeightFormat.FP4_BLOCK32) {
            int[] flag = new int[1];
            CudaRuntime.check(CudaNative.strata_fp4_prepare(weight, count * format.weightBytes(rows, cols), scale,
                count * format.scaleBytes(rows, cols), flag), "strata_fp4_prepare");
            ordinary = flag[0] == 1;
        }
        return new DeviceMatrix(format, weight, scale, rows, cols, ordinary);
    }

    private static DeviceMatrix upload(WeightStore store, MatrixTensors t, int out, int in) {
        long w = store.upload(t.weight()).address();
        long s = t.scale() == null ? 0 : store.upload(t.scale()).address();
        return ofCheckpointBytes(t.format(), w, s, out, in, 1);
    }

    /** The same weights seen as {@code rows} x {@code cols} (one group of a grouped projection). */
    DeviceMatrix reshaped(int rows, int cols) {
        return new DeviceMatrix(format, weight, scale, rows, cols, ordinaryScales);
    }

    /** Device bytes of the weight and its scales. */
    public long bytes() {
        return format.weightBytes(rows, cols) + format.scaleBytes(rows, cols);
    }
}
