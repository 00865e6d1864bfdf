package io.strata.backend.cpu.weights;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One checkpoint tensor as the CPU backend reads it: safetensors dtype name, shape and its bytes
 * (usually a slice of a memory-mapped file, little-endian).
 */
public record TensorView(String name, String dtype, long[] shape, MemorySegment data) {

    public long elements() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    public int dim(int i) {
        return Math.toIntExact(shape[i]);
    }

    /** Fails with the tensor's name when its dtype or shape is not what the model needs. */
    public TensorView require(String expectedDtype, long... expectedShape) {
        if (!dtype.equals(expectedDtype) || !Arrays.equals(shape, expectedShape)) {
            throw new IllegalArgumentException("tensor " + name + ": expected " + expectedDtype
                + Arrays.toString(expectedShape) + " but found " + dtype + Arrays.toString(shape));
        }
        return this;
    }

    /** The values as fp32 (BF16, F16 or F32 tensors only); small tensors such as norms and biases. */
    public float[] toFloats() {
        int n = Math.toIntExact(elements());
        float[] out = new float[n];
        switch (dtype) {
            case "BF16" -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Float.intBitsToFloat((data.get(Layouts.SHORT, 2L * i) & 0xffff) << 16);
                }
            }
            case "F32" -> {
                for (int i = 0; i < n; i++) {
                    out[i] = data.get(Layouts.FLOAT, 4L * i);
                }
            }
            case "F16" -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Float.float16ToFloat(data.get(Layouts.SHORT, 2L * i));
                }
            }
            default -> throw new IllegalArgumentException("tensor " + name + ": cannot read " + dtype + " as floats");
        }
        return out;
    }

    /** The values of an I64 or I32 tensor as ints. */
    public int[] toInts() {
        int n = Math.toIntExact(elements());
        int[] out = new int[n];
        switch (dtype) {
            case "I64" -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Math.toIntExact(data.get(Layouts.LONG, 8L * i));
                }
            }
            case "I32" -> {
                for (int i = 0; i < n; i++) {
                    out[i] = data.get(Layouts.INT, 4L * i);
                }
            }
            default -> throw new IllegalArgumentException("tensor " + name + ": cannot read " + dtype + " as ints");
        }
        return out;
    }
}
