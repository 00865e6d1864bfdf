package io.strata.backend.cpu.weights;

/** Where the backend finds checkpoint tensors by name (the loader's memory-mapped view). */
public interface TensorSource {

    /** The tensor, or an {@link IllegalArgumentException} naming the missing tensor. */
    TensorView tensor(String name);

    boolean contains(String name);
}
