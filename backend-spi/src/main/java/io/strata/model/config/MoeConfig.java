package io.strata.model.config;

/**
 * Mixture-of-experts settings (every layer and the MTP block are MoE; there are no dense layers).
 *
 * @param numRoutedExperts    {@code n_routed_experts}
 * @param numExpertsPerToken  {@code num_experts_per_tok}
 * @param numSharedExperts    {@code n_shared_experts}
 * @param intermediateSize    {@code moe_intermediate_size}, for routed and shared experts alike
 * @param numHashLayers       the first {@code num_hash_layers} layers pick experts from {@code tid2eid}
 * @param scoringFunc         {@code sqrtsoftplus} for V4
 * @param topkMethod          {@code noaux_tc}: the gate bias only affects selection
 * @param normTopkProb        renormalise the selected weights to sum 1
 * @param routedScalingFactor multiplier on the routed weights ({@code routed_scaling_factor})
 * @param swigluLimit         clamp of the SwiGLU gate/up projections ({@code swiglu_limit}); 0 = none
 * @param hiddenAct           {@code silu}
 */
public record MoeConfig(int numRoutedExperts, int numExpertsPerToken, int numSharedExperts, int intermediateSize,
                        int numHashLayers, String scoringFunc, String topkMethod, boolean normTopkProb,
                        double routedScalingFactor, double swigluLimit, String hiddenAct) {
}
