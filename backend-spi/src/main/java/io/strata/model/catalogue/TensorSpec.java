package io.strata.model.catalogue;

import java.util.Arrays;
import java.util.List;

import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.Tensor;

/**
 * One tensor a checkpoint must contain.
 *
 * @param name  checkpoint name, e.g. {@code layers.3.attn.compressor.ape}
 * @param dtype on-disk dtype
 * @param shape on-disk shape (packed FP4 counts bytes: [out, in/2])
 */
public record TensorSpec(String name, DType dtype, List<Integer> shape) {

    public TensorSpec {
        shape = List.copyOf(shape);
    }

    static TensorSpec of(String name, DType dtype, int... shape) {
        return new TensorSpec(name, dtype, Arrays.stream(shape).boxed().toList());
    }

    public int[] shapeArray() {
        return shape.stream().mapToInt(Integer::intValue).toArray();
    }

    public long elementCount() {
        long n = 1;
        for (int d : shape) {
            n *= d;
        }
        return n;
    }

    public long byteSize() {
        return elementCount() * dtype.byteSize();
    }

    public boolean matches(Tensor t) {
        return t.dtype() == dtype && t.hasShape(shapeArray());
    }

    @Override
    public String toString() {
        return name + " " + dtype + shape;
    }
}
