package io.strata.model.config;

import java.util.List;
import java.util.Optional;

/**
 * The per-layer plan derived from a {@link ModelConfig}: which attention flavour, which RoPE and which
 * router each trunk layer and each MTP block uses.
 *
 * @param layers trunk layers followed by the MTP blocks, indexed as in {@link LayerSpec#index()}
 */
public record LayerSchedule(List<LayerSpec> layers) {

    public LayerSchedule {
        layers = List.copyOf(layers);
    }

    /** Derives the schedule; the config has already been validated, so every ratio is known. */
    public static LayerSchedule of(ModelConfig config) {
        int trunk = config.numHiddenLayers();
        int total = trunk + config.numNextnPredictLayers();
        RopeConfig window = new RopeConfig(config.ropeTheta(), config.attention().ropeHeadDim(), Optional.empty());
        RopeConfig compressed = new RopeConfig(config.compressRopeTheta(), config.attention().ropeHeadDim(),
                config.ropeScaling());
        var specs = new java.util.ArrayList<LayerSpec>(total);
        for (int i = 0; i < total; i++) {
            LayerKind kind = LayerKind.forRatio(config.compressRatios().get(i));
            boolean mtp = i >= trunk;
            boolean hash = !mtp && i < config.moe().numHashLayers();
            String prefix = mtp ? "mtp." + (i - trunk) + "." : "layers." + i + ".";
            specs.add(new LayerSpec(i, mtp, kind, hash, kind.hasCompressor() ? compressed : window, prefix));
        }
        return new LayerSchedule(specs);
    }

    public LayerSpec layer(int index) {
        return layers.get(index);
    }

    public int size() {
        return layers.size();
    }

    public List<LayerSpec> trunk() {
        return layers.stream().filter(l -> !l.mtp()).toList();
    }

    public List<LayerSpec> mtp() {
        return layers.stream().filter(LayerSpec::mtp).toList();
    }

    /** Indices of the layers of one kind (MTP blocks included). */
    public List<Integer> indicesOf(LayerKind kind) {
        return layers.stream().filter(l -> l.kind() == kind).map(LayerSpec::index).toList();
    }
}
