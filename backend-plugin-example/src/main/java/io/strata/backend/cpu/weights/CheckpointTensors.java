package io.strata.backend.cpu.weights;

import io.strata.model.checkpoint.Tensor;

import java.util.Arrays;
import java.util.Map;

/** Adapts the loader's memory-mapped tensors ({@code io.strata.model.checkpoint}) to {@link TensorSource}. */
public final class CheckpointTensors implements TensorSource {
    private final Map<String, Tensor> tensors;

    public CheckpointTensors(Map<String, Tensor> tensors) {
        this.tensors = Map.copyOf(tensors);
    }

    @Override
    public TensorView tensor(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException("checkpoint has no tensor " + name);
        }
        long[] shape = Arrays.stream(t.shape()).asLongStream().toArray();
        return new TensorView(name, t.dtype().name(), shape, t.segment());
    }

    @Override
    public boolean contains(String name) {
        return tensors.containsKey(name);
    }
}
