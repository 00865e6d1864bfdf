package io.strata.model;

import java.util.Optional;

import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.LayerSpec;
import io.strata.model.weights.WeightMatrix;

/**
 * The tensors of one layer, addressed by their name inside the layer ({@code attn.wq_a}, {@code ffn.gate.bias}).
 *
 * @param spec  the layer's place in the schedule (kind, RoPE, routing, name prefix)
 * @param model the model it belongs to
 */
public record LayerWeights(LayerSpec spec, LoadedModel model) {

    /** e.g. {@code tensor("attn.attn_sink")} → {@code layers.N.attn.attn_sink}. */
    public Tensor tensor(String localName) {
        return model.tensor(spec.weightPrefix() + localName);
    }

    public Optional<Tensor> find(String localName) {
        return model.find(spec.weightPrefix() + localName);
    }

    /** e.g. {@code linear("attn.wq_b")} or {@code linear("ffn.shared_experts.w2")}. */
    public WeightMatrix linear(String localModule) {
        return model.linear(spec.weightPrefix() + localModule);
    }

    /** Routed expert {@code expert}'s projection {@code w} ("w1", "w2" or "w3"). */
    public WeightMatrix expert(int expert, String w) {
        return linear("ffn.experts." + expert + "." + w);
    }
}
