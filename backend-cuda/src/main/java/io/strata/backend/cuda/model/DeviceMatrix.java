package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.checkpoint.TensorSet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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

    /**
     * Linears of the same input stacked into one matrix, their output features one after the other ({@code [sum of
     * outs, in]}), so one GEMM computes them all; null when their formats differ or an FP8 matrix's rows do not end
     * on a 128-row scale block (the scales would not stack).
     */
    public static DeviceMatrix loadStacked(WeightStore store, TensorSet ckpt, List<String> prefixes, int[] outs, int in) {
        List<MatrixTensors> ts = new ArrayList<>();
        for (int i = 0; i < prefixes.size(); i++) {
            ts.add(MatrixTensors.linear(ckpt, prefixes.get(i), outs[i], in));
        }
        WeightFormat format = ts.getFirst().format();
        for (int i = 0; i < ts.size(); i++) {
            if (ts.get(i).format() != format || (format == WeightFormat.FP8_BLOCK128 && outs[i] % 128 != 0)) {
                return null;
            }
        }
        long w = store.join(ts.stream().map(MatrixTensors::weight).toList()).address();
        long s = ts.getFirst().scale() == null ? 0 : store.join(ts.stream().map(MatrixTensors::scale).toList()).address();
        return ofCheckpointBytes(format, w, s, Arrays.stream(outs).sum(), in, 1);
    }

    private static DeviceMatrix upload(WeightStore store, MatrixTensors t, int out, int in) {
        long w = store.upload(t.weight()).address();
        long s = t.scale() == null ? 0 : store.upload(t.scale()).address();
        return ofCheckpointBytes(t.format(), w, s, out, in, 1);
    }

    /** Output features {@code [from, from + count)} of this matrix (FP8: {@code from} on a 128-row scale block). */
    DeviceMatrix rowRange(int from, int count) {
        if (format == WeightFormat.FP8_BLOCK128 && from % 128 != 0) {
            throw new IllegalArgumentException("FP8 rows from " + from + " do not start a scale block");
        }
        return new DeviceMatrix(format, weight + format.weightBytes(from, cols),
            scale == 0 ? 0 : scale + format.scaleBytes(from, cols), count, cols, ordinaryScales);
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
