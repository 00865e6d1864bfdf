package io.strata.model.weights;

import java.util.Arrays;
import java.util.Optional;

import io.strata.model.checkpoint.CheckpointException;
import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.format.BlockDequant;

/**
 * A 2-D linear weight [out, in] in whatever storage the checkpoint uses — BF16/F16/F32, FP8 e4m3 with 128x128
 * ue8m0 blocks, or packed FP4 e2m1 with 1x32 ue8m0 groups — read back as float32 rows. Rows are decoded from
 * the mapping on demand; nothing is materialised.
 */
public sealed interface WeightMatrix permits WeightMatrix.Plain, WeightMatrix.Fp8Blocks, WeightMatrix.Fp4Groups {

    /** Output channels. */
    int rows();

    /** Input channels (logical: for FP4, twice the stored byte columns). */
    int cols();

    /** The stored weight tensor. */
    Tensor weight();

    /** The scale tensor of a quantized weight. */
    Optional<Tensor> scale();

    /** Decodes row {@code row}, dequantized, into {@code dst[0, cols)}. */
    void readRow(int row, float[] dst);

    /** The whole matrix as floats, row-major; for small weights and tests. */
    default float[] toFloatArray() {
        float[] out = new float[Math.multiplyExact(rows(), cols())];
        float[] row = new float[cols()];
        for (int r = 0; r < rows(); r++) {
            readRow(r, row);
            System.arraycopy(row, 0, out, r * cols(), cols());
        }
        return out;
    }

    /**
     * Wraps a weight and its optional {@code .scale}: BF16/F16/F32 take no scale, F8_E4M3 needs an F8_E8M0
     * [ceil(out/128), ceil(in/128)] scale, I8 (packed FP4) needs an F8_E8M0 [out, in/32] scale.
     */
    static WeightMatrix of(Tensor weight, Tensor scale) {
        if (weight.rank() != 2) {
            throw new CheckpointException(weight.file(), weight.name(), "a linear weight must be 2-D, got "
                    + Arrays.toString(weight.shape()));
        }
        int rows = weight.dim(0);
        return switch (weight.dtype()) {
            case BF16, F16, F32 -> {
                if (scale != null) {
                    throw new CheckpointException(weight.file(), scale.name(), "a " + weight.dtype()
                            + " weight takes no scale");
                }
                yield new Plain(weight);
            }
            case F8_E4M3 -> {
                requireScale(weight, scale, BlockDequant.fp8ScaleShape(rows, weight.dim(1)));
                yield new Fp8Blocks(weight, scale);
            }
            case I8, U8 -> {
                int cols = 2 * weight.dim(1);
                requireScale(weight, scale, BlockDequant.fp4ScaleShape(rows, cols));
                yield new Fp4Groups(weight, scale, cols);
            }
            default -> throw new CheckpointException(weight.file(), weight.name(),
                    "dtype " + weight.dtype() + " is not a linear-weight format");
        };
    }

    private static void requireScale(Tensor weight, Tensor scale, int[] shape) {
        if (scale == null) {
            throw new CheckpointException(weight.file(), weight.name(), weight.dtype() + " weight has no .scale tensor");
        }
        if (scale.dtype() != DType.F8_E8M0 || !scale.hasShape(shape)) {
            throw new CheckpointException(scale.file(), scale.name(), "expected F8_E8M0" + Arrays.toString(shape)
                    + " for " + weight.name() + " " + Arrays.toString(weight.shape()) + ", got " + scale.dtype()
                    + Arrays.toString(scale.shape()));
        }
    }

    record Plain(Tensor weight) implements WeightMatrix {
        public int rows() {
            return weight.dim(0);
        }

        public int cols() {
            return weight.dim(1);
        }

        public Optional<Tensor> scale() {
            return Optional.empty();
        }

        public void readRow(int row, float[] dst) {
            weight.readRow(row, dst);
        }
    }

    record Fp8Blocks(Tensor weight, Tensor scaleTensor) implements WeightMatrix {
        public int rows() {
            return weight.dim(0);
        }

        public int cols() {
            return weight.dim(1);
        }

        public Optional<Tensor> scale() {
            return Optional.of(scaleTensor);
        }

        public void readRow(int row, float[] dst) {
            java.util.Objects.checkIndex(row, rows());
            BlockDequant.fp8Row(weight.segment(), scaleTensor.segment(), cols(), row, dst);
        }
    }

    record Fp4Groups(Tensor weight, Tensor scaleTensor, int cols) implements WeightMatrix {
        public int rows() {
            return weight.dim(0);
        }

        public Optional<Tensor> scale() {
            return Optional.of(scaleTensor);
        }

        public void readRow(int row, float[] dst) {
            java.util.Objects.checkIndex(row, rows());
            BlockDequant.fp4Row(weight.segment(), scaleTensor.segment(), cols, row, dst);
        }
    }
}
