package io.strata.backend.cuda.model;

import io.strata.model.checkpoint.Tensor;
import io.strata.model.checkpoint.TensorSet;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * One projection of all routed experts of a layer, uploaded back to back: expert {@code e}'s weight is at
 * {@code first.weight() + e * weightStride}, its scales at {@code first.scale() + e * scaleStride}, so one
 * grouped GEMM launch reaches every expert.
 */
public record ExpertMatrices(DeviceMatrix first, int experts, long weightStride, long scaleStride) {

    /** @param prefix the linear prefix of expert e, e.g. {@code e -> "layers.3.ffn.experts." + e + ".w1"} */
    public static ExpertMatrices load(WeightStore store, TensorSet ckpt, IntFunction<String> prefix, int experts,
                                      int out, int in) {
        List<Tensor> weights = new ArrayList<>(experts);
        List<Tensor> scales = new ArrayList<>(experts);
        WeightFormat format = null;
        for (int e = 0; e < experts; e++) {
            MatrixTensors t = MatrixTensors.linear(ckpt, prefix.apply(e), out, in);
            if (format != null && t.format() != format) {
                throw new IllegalArgumentException("tensor " + t.weight().name() + " is " + t.format()
                    + ", but expert 0 is " + format + ": one format per projection is required");
            }
            format = t.format();
            weights.add(t.weight());
            if (t.scale() != null) {
                scales.add(t.scale());
            }
        }
        long w = store.concat(weights).address();
        long s = scales.isEmpty() ? 0 : store.concat(scales).address();
        DeviceMatrix first = DeviceMatrix.ofCheckpointBytes(format, w, s, out, in, experts);
        return new ExpertMatrices(first, experts, format.weightBytes(out, in), format.scaleBytes(out, in));
    }

    public WeightFormat format() {
        return first.format();
    }

    /**
     * Whether one paired launch can multiply by this projection and {@code other} (w1 and w3): as many experts of
     * the same shape and format code (scale flags included), hence the same strides.
     */
    public boolean pairsWith(ExpertMatrices other) {
        return experts == other.experts && first.rows() == other.first.rows() && first.cols() == other.first.cols()
            && first.fmtCode() == other.first.fmtCode();
    }

    public long bytes() {
        return experts * first.bytes();
    }
}
