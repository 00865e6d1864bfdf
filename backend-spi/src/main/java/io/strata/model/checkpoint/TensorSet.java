package io.strata.model.checkpoint;

import java.util.Map;
import java.util.Optional;

/** Tensors looked up by name, as one safetensors file and a whole (sharded) checkpoint both offer them. */
public interface TensorSet {

    /** Every tensor by name. */
    Map<String, Tensor> tensors();

    /** The error for a name that is not here, naming where it was looked up. */
    CheckpointException noSuchTensor(String name);

    default Optional<Tensor> find(String name) {
        return Optional.ofNullable(tensors().get(name));
    }

    default Tensor tensor(String name) {
        Tensor t = tensors().get(name);
        if (t == null) {
            throw noSuchTensor(name);
        }
        return t;
    }
}
