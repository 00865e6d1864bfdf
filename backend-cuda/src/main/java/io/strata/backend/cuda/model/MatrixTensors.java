package io.strata.backend.cuda.model;

import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.checkpoint.TensorSet;

import java.util.Arrays;

/**
 * The checkpoint tensors of one weight matrix, shape-checked: the stored dtype decides the format, as the CPU
 * backend's {@code Linears} decides it. Errors name the tensor.
 */
record MatrixTensors(WeightFormat format, Tensor weight, Tensor scale) {

    /** {@code {prefix}.weight} (and {@code {prefix}.scale} for F8_E4M3 / I8) of an {@code [out, in]} linear. */
    static MatrixTensors linear(TensorSet ckpt, String prefix, int out, int in) {
        Tensor w = ckpt.tensor(prefix + ".weight");
        return switch (w.dtype()) {
            case BF16 -> new MatrixTensors(WeightFormat.BF16, require(w, DType.BF16, out, in), null);
            case F32 -> new MatrixTensors(WeightFormat.F32, require(w, DType.F32, out, in), null);
            case F8_E4M3 -> new MatrixTensors(WeightFormat.FP8_BLOCK128, require(w, DType.F8_E4M3, out, in),
                require(ckpt.tensor(prefix + ".scale"), DType.F8_E8M0, (out + 127) / 128, (in + 127) / 128));
            case I8 -> {
                if (in % 32 != 0) {
                    throw new IllegalArgumentException("tensor " + w.name() + ": FP4 needs in features % 32 == 0, got " + in);
                }
                yield new MatrixTensors(WeightFormat.FP4_BLOCK32, require(w, DType.I8, out, in / 2),
                    require(ckpt.tensor(prefix + ".scale"), DType.F8_E8M0, out, in / 32));
            }
            default -> throw new IllegalArgumentException("tensor " + w.name() + ": unsupported linear dtype " + w.dtype());
        };
    }

    /** A BF16 or F32 weight named in full (router gate, head, compressor projections). */
    static MatrixTensors dense(TensorSet ckpt, String name, int out, int in) {
        Tensor w = ckpt.tensor(name);
        return switch (w.dtype()) {
            case BF16 -> new MatrixTensors(WeightFormat.BF16, require(w, DType.BF16, out, in), null);
            case F32 -> new MatrixTensors(WeightFormat.F32, require(w, DType.F32, out, in), null);
            default -> throw new IllegalArgumentException("tensor " + name + ": expected BF16 or F32, found " + w.dtype());
        };
    }

    static Tensor require(Tensor t, DType dtype, int... shape) {
        if (t.dtype() != dtype || !t.hasShape(shape)) {
            throw new IllegalArgumentException("tensor " + t.name() + ": expected " + dtype + Arrays.toString(shape)
                + ", found " + t.dtype() + Arrays.toString(t.shape()));
        }
        return t;
    }
}
