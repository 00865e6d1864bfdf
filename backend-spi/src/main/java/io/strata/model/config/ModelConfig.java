package io.strata.model.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * An immutable, validated DeepSeek-V4 {@code config.json} ({@code model_type: deepseek_v4}). Build it with
 * {@link #parse(Path)} / {@link #parse(String, String)}; a constructed instance always satisfies the rules
 * of {@link ModelConfigParser}.
 *
 * @param modelType             {@code deepseek_v4}
 * @param architectures         {@code [DeepseekV4ForCausalLM]}
 * @param vocabSize             embedding / head rows
 * @param hiddenSize            model width D
 * @param numHiddenLayers       trunk layers
 * @param numNextnPredictLayers MTP blocks ({@code num_nextn_predict_layers})
 * @param compressRatios        one entry per trunk layer then one per MTP block; each 0, 4 or 128
 * @param attention             attention dimensions
 * @param indexer               Lightning Indexer dimensions (used by ratio-4 layers)
 * @param moe                   mixture-of-experts settings
 * @param hyperConnections      hyper-connection settings
 * @param ropeTheta             RoPE base of window-only layers
 * @param compressRopeTheta     RoPE base of compressed layers
 * @param ropeScaling           YaRN, applied on compressed layers only
 * @param maxPositionEmbeddings longest supported context
 * @param rmsNormEps            epsilon of every RMSNorm
 * @param quantization          present for FP8 checkpoints; absent means BF16 linears
 * @param expertDtype           routed-expert storage: {@code expert_dtype} when given, otherwise FP8 for a
 *                              quantized checkpoint and BF16 for an unquantized one
 * @param tieWordEmbeddings     always false for V4
 * @param bosTokenId            begin-of-sentence id
 * @param eosTokenId            end-of-sentence id
 * @param attentionBias         {@code attention_bias} (false)
 * @param initializerRange      {@code initializer_range}
 * @param torchDtype            {@code torch_dtype}
 * @param transformersVersion   {@code transformers_version}, when present
 * @param useCache              {@code use_cache}
 */
public record ModelConfig(
        String modelType,
        List<String> architectures,
        int vocabSize,
        int hiddenSize,
        int numHiddenLayers,
        int numNextnPredictLayers,
        List<Integer> compressRatios,
        AttentionConfig attention,
        IndexerConfig indexer,
        MoeConfig moe,
        HyperConnectionConfig hyperConnections,
        double ropeTheta,
        double compressRopeTheta,
        Optional<YarnScaling> ropeScaling,
        long maxPositionEmbeddings,
        double rmsNormEps,
        Optional<QuantizationConfig> quantization,
        ExpertDtype expertDtype,
        boolean tieWordEmbeddings,
        int bosTokenId,
        int eosTokenId,
        boolean attentionBias,
        double initializerRange,
        String torchDtype,
        Optional<String> transformersVersion,
        boolean useCache) {

    public ModelConfig {
        architectures = List.copyOf(architectures);
        compressRatios = List.copyOf(compressRatios);
    }

    /** Reads and validates a {@code config.json}. */
    public static ModelConfig parse(Path configJson) throws IOException {
        return ModelConfigParser.parse(configJson);
    }

    /** Parses and validates JSON text; {@code source} names it in error messages. */
    public static ModelConfig parse(String json, String source) {
        return ModelConfigParser.parse(json, source);
    }

    public static ModelConfig parse(InputStream json, String source) throws IOException {
        return ModelConfigParser.parse(new String(json.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8),
                source);
    }

    /** Trunk layers plus MTP blocks. */
    public int totalLayers() {
        return numHiddenLayers + numNextnPredictLayers;
    }

    /** Whether the linears are FP8 with block scales (else BF16). */
    public boolean quantized() {
        return quantization.isPresent();
    }

    /** The derived per-layer plan (trunk then MTP). */
    public LayerSchedule schedule() {
        return LayerSchedule.of(this);
    }
}
