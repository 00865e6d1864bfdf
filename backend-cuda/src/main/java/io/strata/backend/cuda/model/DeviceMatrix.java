package io.strata.backend.cuda.model;

import io.strata.model.checkpoint.TensorSet;

/**
 * A weight matrix on the device in its checkpoint format: {@code rows} output features by {@code cols} input
 * features. {@code weight} and {@code scale} are device addresses ({@code scale} is 0 for BF16 and F32).
 */
public record DeviceMatrix(WeightFormat format, long weight, long scale, int rows, int cols) {

    /** {@code {prefix}.weight} (+ {@code {prefix}.scale}) of an {@code [out, in]} linear; the dtype decides the format. */
    public static DeviceMatrix load(WeightStore store, TensorSet ckpt, String prefix, int out, int in) {
        return upload(store, MatrixTensors.linear(ckpt, prefix, out, in), out, in);
    }

    /** A BF16 or F32 weight named in full, e.g. {@code head.weight} or {@code layers.0.ffn.gate.weight}. */
    public static DeviceMatrix loadTensor(WeightStore store, TensorSet ckpt, String name, int out, int in) {
        return upload(store, MatrixTensors.dense(ckpt, name, out, in), out, in);
    }

    private static DeviceMatrix upload(WeightStore store, MatrixTensors t, int out, int in) {
        long w = store.upload(t.weight()).address();
        long s = t.scale() == null ? 0 : store.upload(t.scale()).address();
        return new DeviceMatrix(t.format(), w, s, out, in);
    }

    /** Device bytes of the weight and its scales. */
    public long bytes() {
        return format.weightBytes(rows, cols) + format.scaleBytes(rows, cols);
    }
}
