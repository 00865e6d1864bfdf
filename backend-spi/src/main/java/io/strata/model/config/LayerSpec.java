package io.strata.model.config;

/**
 * Everything layer-specific that follows from the config.
 *
 * @param index        position in the schedule: 0..n_layers-1 for the trunk, n_layers+k for MTP block k
 *                     (the reference gives the MTP block {@code layer_id = n_layers})
 * @param mtp          whether this is a multi-token-prediction block
 * @param kind         attention flavour
 * @param hashRouted   whether the MoE picks experts from {@code tid2eid} by token id instead of by score
 * @param rope         RoPE parameters of this layer
 * @param weightPrefix checkpoint name prefix, {@code layers.N.} or {@code mtp.K.}
 */
public record LayerSpec(int index, boolean mtp, LayerKind kind, boolean hashRouted, RopeConfig rope,
                        String weightPrefix) {

    public int compressRatio() {
        return kind.compressRatio();
    }
}
