package io.strata.model.config;

/**
 * The {@code quantization_config} block. V4 ships FP8 e4m3 linears with one ue8m0 (power-of-two) scale
 * per 128x128 weight block and activations quantized on the fly per 128 channels.
 *
 * @param quantMethod      {@code fp8}
 * @param fmt              {@code e4m3}
 * @param scaleFmt         {@code ue8m0}
 * @param blockRows        first entry of {@code weight_block_size} (output channels per scale)
 * @param blockCols        second entry of {@code weight_block_size} (input channels per scale)
 * @param activationScheme {@code dynamic}
 */
public record QuantizationConfig(String quantMethod, String fmt, String scaleFmt, int blockRows, int blockCols,
                                 String activationScheme) {
}
