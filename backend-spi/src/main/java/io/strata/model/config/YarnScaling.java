package io.strata.model.config;

/**
 * The {@code rope_scaling} block: YaRN frequency interpolation used by the compressed-attention layers.
 *
 * @param type                          always {@code yarn} for DeepSeek-V4
 * @param factor                        interpolation factor (16 for V4)
 * @param originalMaxPositionEmbeddings context the model was pre-trained on (65536 for V4)
 * @param betaFast                      rotations that bound the unscaled high-frequency pairs (32)
 * @param betaSlow                      rotations that bound the fully-scaled low-frequency pairs (1)
 */
public record YarnScaling(String type, double factor, int originalMaxPositionEmbeddings, double betaFast,
                          double betaSlow) {
}
