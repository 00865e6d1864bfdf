package io.strata.model.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Turns {@code config.json} text into a {@link ModelConfig}, collecting every violated rule before failing
 * so an operator sees all problems at once.
 */
public final class ModelConfigParser {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Activation quantization works on 128-channel blocks; FP8 weights use 128x128 scale blocks. */
    static final int FP8_BLOCK = 128;
    /** The KV cache simulates FP8 on the non-rotated channels in blocks of 64. */
    static final int KV_FP8_BLOCK = 64;
    /** FP4 (indexer activations, routed experts) uses one scale per 32 values. */
    static final int FP4_BLOCK = 32;
    private static final Set<String> SCORING_FUNCS = Set.of("sqrtsoftplus", "softmax", "sigmoid");

    private ModelConfigParser() {
    }

    public static ModelConfig parse(Path configJson) throws IOException {
        return parse(Files.readString(configJson), configJson.toString());
    }

    public static ModelConfig parse(String json, String source) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JacksonException e) {
            throw new InvalidConfigException(source, "(document)", "must be valid JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new InvalidConfigException(source, "(document)", "must be a JSON object");
        }
        Fields f = new Fields(root);
        ModelConfig config = read(f);
        if (config == null || !f.violations.isEmpty()) {
            throw new InvalidConfigException(source, f.violations);
        }
        List<ConfigViolation> semantic = validate(config);
        if (!semantic.isEmpty()) {
            throw new InvalidConfigException(source, semantic);
        }
        return config;
    }

    private static ModelConfig read(Fields f) {
        String modelType = f.string("model_type", null);
        List<String> architectures = f.stringList("architectures");
        int vocab = f.integer("vocab_size");
        int hidden = f.integer("hidden_size");
        int layers = f.integer("num_hidden_layers");
        int mtp = f.integer("num_nextn_predict_layers");
        List<Integer> ratios = f.intList("compress_ratios");
        var attention = new AttentionConfig(f.integer("num_attention_heads"), f.integer("num_key_value_heads"),
                f.integer("head_dim"), f.integer("qk_rope_head_dim"), f.integer("q_lora_rank"),
                f.integer("o_groups"), f.integer("o_lora_rank"), f.integer("sliding_window"),
                f.bool("attention_bias", false), f.number("attention_dropout", 0.0));
        var indexer = new IndexerConfig(f.integer("index_n_heads"), f.integer("index_head_dim"),
                f.integer("index_topk"));
        var moe = new MoeConfig(f.integer("n_routed_experts"), f.integer("num_experts_per_tok"),
                f.integer("n_shared_experts"), f.integer("moe_intermediate_size"), f.integer("num_hash_layers"),
                f.string("scoring_func", null), f.string("topk_method", null), f.bool("norm_topk_prob", null),
                f.number("routed_scaling_factor", null), f.number("swiglu_limit", null),
                f.string("hidden_act", null));
        var hc = new HyperConnectionConfig(f.integer("hc_mult"), f.integer("hc_sinkhorn_iters"),
                f.number("hc_eps", null));
        double ropeTheta = f.number("rope_theta", null);
        double compressTheta = f.number("compress_rope_theta", null);
        Optional<YarnScaling> yarn = readYarn(f);
        long maxPos = f.longInteger("max_position_embeddings");
        double eps = f.number("rms_norm_eps", null);
        Optional<QuantizationConfig> quant = readQuantization(f);
        ExpertDtype expertDtype = readExpertDtype(f, quant.isPresent());
        boolean tie = f.bool("tie_word_embeddings", false);
        int bos = f.integer("bos_token_id");
        int eos = f.integer("eos_token_id");
        double initRange = f.number("initializer_range", 0.02);
        String torchDtype = f.string("torch_dtype", "bfloat16");
        Optional<String> tfVersion = Optional.ofNullable(f.string("transformers_version", ""))
                .filter(s -> !s.isEmpty());
        boolean useCache = f.bool("use_cache", true);
        if (!f.violations.isEmpty()) {
            return null;
        }
        return new ModelConfig(modelType, architectures, vocab, hidden, layers, mtp, ratios, attention, indexer, moe,
                hc, ropeTheta, compressTheta, yarn, maxPos, eps, quant, expertDtype, tie, bos, eos,
                attention.attentionBias(), initRange, torchDtype, tfVersion, useCache);
    }

    private static Optional<YarnScaling> readYarn(Fields f) {
        Fields y = f.object("rope_scaling");
        if (y == null) {
            return Optional.empty();
        }
        var yarn = new YarnScaling(y.string("type", null), y.number("factor", null),
                y.integer("original_max_position_embeddings"), y.number("beta_fast", null),
                y.number("beta_slow", null));
        return Optional.of(yarn);
    }

    private static Optional<QuantizationConfig> readQuantization(Fields f) {
        Fields q = f.object("quantization_config");
        if (q == null) {
            return Optional.empty();
        }
        List<Integer> block = q.intList("weight_block_size");
        int rows = block.size() == 2 ? block.get(0) : -1;
        int cols = block.size() == 2 ? block.get(1) : -1;
        if (q.has("weight_block_size") && block.size() != 2) {
            q.violation("weight_block_size", "must have exactly 2 entries [rows, cols]");
        }
        return Optional.of(new QuantizationConfig(q.string("quant_method", null), q.string("fmt", null),
                q.string("scale_fmt", null), rows, cols, q.string("activation_scheme", "dynamic")));
    }

    private static ExpertDtype readExpertDtype(Fields f, boolean quantized) {
        String name = f.string("expert_dtype", "");
        if (name.isEmpty()) {
            return quantized ? ExpertDtype.FP8 : ExpertDtype.BF16;
        }
        for (ExpertDtype dtype : ExpertDtype.values()) {
            if (dtype.jsonName().equals(name) && dtype != ExpertDtype.BF16) {
                return dtype;
            }
        }
        f.violation("expert_dtype", "must be \"fp4\" or \"fp8\" (or absent), got \"" + name + "\"");
        return ExpertDtype.BF16;
    }

    /** Rules that relate several keys; only run on a config whose keys all parsed. */
    static List<ConfigViolation> validate(ModelConfig c) {
        var v = new Rules();
        v.check("model_type", "deepseek_v4".equals(c.modelType()), "must be \"deepseek_v4\", got \"" + c.modelType() + "\"");
        v.positive("vocab_size", c.vocabSize());
        v.positive("hidden_size", c.hiddenSize());
        v.positive("num_hidden_layers", c.numHiddenLayers());
        v.check("num_nextn_predict_layers", c.numNextnPredictLayers() >= 0, "must be >= 0");
        int expected = c.numHiddenLayers() + c.numNextnPredictLayers();
        v.check("compress_ratios", c.compressRatios().size() == expected,
                "must have num_hidden_layers + num_nextn_predict_layers = " + expected
                        + " entries (one per layer, then one per MTP block), got " + c.compressRatios().size());
        for (int i = 0; i < c.compressRatios().size(); i++) {
            int r = c.compressRatios().get(i);
            v.check("compress_ratios[" + i + "]", LayerKind.forRatio(r) != null,
                    "must be 0 (window only), 4 (C4A) or 128 (C128A), got " + r);
        }

        AttentionConfig a = c.attention();
        v.positive("num_attention_heads", a.numHeads());
        v.check("num_key_value_heads", a.numKeyValueHeads() == 1,
                "must be 1 (DeepSeek-V4 has one shared K=V head), got " + a.numKeyValueHeads());
        v.positive("head_dim", a.headDim());
        v.check("qk_rope_head_dim", a.ropeHeadDim() > 0 && a.ropeHeadDim() % 2 == 0 && a.ropeHeadDim() < a.headDim(),
                "must be positive, even and smaller than head_dim (" + a.headDim() + "), got " + a.ropeHeadDim());
        v.check("head_dim", (a.headDim() - a.ropeHeadDim()) % KV_FP8_BLOCK == 0,
                "head_dim - qk_rope_head_dim must be a multiple of " + KV_FP8_BLOCK
                        + " (the KV cache quantizes non-rotated channels in blocks of 64), got "
                        + (a.headDim() - a.ropeHeadDim()));
        v.positive("q_lora_rank", a.qLoraRank());
        v.positive("o_groups", a.oGroups());
        v.positive("o_lora_rank", a.oLoraRank());
        v.check("o_groups", a.oGroups() > 0 && (long) a.numHeads() * a.headDim() % a.oGroups() == 0,
                "must divide num_attention_heads * head_dim = " + (long) a.numHeads() * a.headDim());
        v.positive("sliding_window", a.slidingWindow());
        v.check("attention_bias", !a.attentionBias(), "must be false (V4 linears have no bias)");

        IndexerConfig ix = c.indexer();
        v.positive("index_n_heads", ix.numHeads());
        v.check("index_head_dim", ix.headDim() > 0 && Integer.bitCount(ix.headDim()) == 1
                        && ix.headDim() % FP4_BLOCK == 0 && ix.headDim() >= a.ropeHeadDim(),
                "must be a power of two (Hadamard transform), a multiple of " + FP4_BLOCK
                        + " (FP4 blocks) and >= qk_rope_head_dim, got " + ix.headDim());
        v.positive("index_topk", ix.topk());

        MoeConfig m = c.moe();
        v.positive("n_routed_experts", m.numRoutedExperts());
        v.check("num_experts_per_tok", m.numExpertsPerToken() > 0 && m.numExpertsPerToken() <= m.numRoutedExperts(),
                "must be in 1..n_routed_experts (" + m.numRoutedExperts() + "), got " + m.numExpertsPerToken());
        v.check("n_shared_experts", m.numSharedExperts() == 1,
                "must be 1 (every V4 MoE has exactly one shared expert), got " + m.numSharedExperts());
        v.positive("moe_intermediate_size", m.intermediateSize());
        v.check("num_hash_layers", m.numHashLayers() >= 0 && m.numHashLayers() <= c.numHiddenLayers(),
                "must be in 0..num_hidden_layers (" + c.numHiddenLayers() + "), got " + m.numHashLayers());
        v.check("scoring_func", SCORING_FUNCS.contains(m.scoringFunc()),
                "must be one of " + SCORING_FUNCS + ", got \"" + m.scoringFunc() + "\"");
        v.check("topk_method", "noaux_tc".equals(m.topkMethod()), "must be \"noaux_tc\", got \"" + m.topkMethod() + "\"");
        v.check("routed_scaling_factor", m.routedScalingFactor() > 0, "must be > 0");
        v.check("swiglu_limit", m.swigluLimit() >= 0, "must be >= 0 (0 = no clamp)");
        v.check("hidden_act", "silu".equals(m.hiddenAct()), "must be \"silu\", got \"" + m.hiddenAct() + "\"");

        HyperConnectionConfig hc = c.hyperConnections();
        v.positive("hc_mult", hc.mult());
        v.positive("hc_sinkhorn_iters", hc.sinkhornIters());
        v.check("hc_eps", hc.eps() > 0, "must be > 0");

        v.check("rope_theta", c.ropeTheta() > 1, "must be > 1");
        v.check("compress_rope_theta", c.compressRopeTheta() > 1, "must be > 1");
        c.ropeScaling().ifPresent(y -> {
            v.check("rope_scaling.type", "yarn".equals(y.type()), "must be \"yarn\", got \"" + y.type() + "\"");
            v.check("rope_scaling.factor", y.factor() >= 1, "must be >= 1");
            v.check("rope_scaling.original_max_position_embeddings", y.originalMaxPositionEmbeddings() > 0, "must be > 0");
            v.check("rope_scaling.beta_fast", y.betaFast() > y.betaSlow() && y.betaSlow() > 0,
                    "must satisfy beta_fast > beta_slow > 0");
        });
        v.check("max_position_embeddings", c.maxPositionEmbeddings() > 0, "must be > 0");
        v.check("rms_norm_eps", c.rmsNormEps() > 0, "must be > 0");
        v.check("tie_word_embeddings", !c.tieWordEmbeddings(), "must be false (V4 has a separate head.weight)");
        v.check("bos_token_id", c.bosTokenId() >= 0 && c.bosTokenId() < c.vocabSize(), "must be in 0..vocab_size-1");
        v.check("eos_token_id", c.eosTokenId() >= 0 && c.eosTokenId() < c.vocabSize(), "must be in 0..vocab_size-1");

        c.quantization().ifPresent(q -> {
            v.check("quantization_config.quant_method", "fp8".equals(q.quantMethod()), "must be \"fp8\"");
            v.check("quantization_config.fmt", "e4m3".equals(q.fmt()), "must be \"e4m3\"");
            v.check("quantization_config.scale_fmt", "ue8m0".equals(q.scaleFmt()),
                    "must be \"ue8m0\" (power-of-two scales)");
            v.check("quantization_config.weight_block_size", q.blockRows() == FP8_BLOCK && q.blockCols() == FP8_BLOCK,
                    "must be [128, 128] (the activation quantization block is 128), got ["
                            + q.blockRows() + ", " + q.blockCols() + "]");
            v.check("quantization_config.activation_scheme", "dynamic".equals(q.activationScheme()),
                    "must be \"dynamic\"");
            // Every FP8/FP4 matmul quantizes its input per 128 channels; these are the input widths.
            v.multiple("hidden_size", c.hiddenSize(), FP8_BLOCK);
            v.multiple("q_lora_rank", a.qLoraRank(), FP8_BLOCK);
            v.multiple("moe_intermediate_size", m.intermediateSize(), FP8_BLOCK);
            v.check("o_lora_rank", (long) a.oGroups() * a.oLoraRank() % FP8_BLOCK == 0,
                    "o_groups * o_lora_rank must be a multiple of 128 (FP8 block quantization of wo_b's input), got "
                            + (long) a.oGroups() * a.oLoraRank());
        });
        if (c.expertDtype() == ExpertDtype.FP4) {
            v.multiple("hidden_size", c.hiddenSize(), FP4_BLOCK);
            v.multiple("moe_intermediate_size", m.intermediateSize(), FP4_BLOCK);
        }
        return v.violations;
    }

    private static final class Rules {
        final List<ConfigViolation> violations = new ArrayList<>();

        void check(String key, boolean ok, String rule) {
            if (!ok && violations.stream().noneMatch(x -> x.key().equals(key) && x.rule().equals(rule))) {
                violations.add(new ConfigViolation(key, rule));
            }
        }

        void positive(String key, long value) {
            check(key, value > 0, "must be > 0, got " + value);
        }

        void multiple(String key, long value, int block) {
            check(key, value % block == 0, "must be a multiple of " + block
                    + " (FP8/FP4 block quantization), got " + value);
        }
    }

    /** Typed access to one JSON object, recording missing or mistyped keys instead of throwing. */
    private static final class Fields {
        final JsonNode node;
        final String prefix;
        final List<ConfigViolation> violations;

        Fields(JsonNode node) {
            this(node, "", new ArrayList<>());
        }

        private Fields(JsonNode node, String prefix, List<ConfigViolation> violations) {
            this.node = node;
            this.prefix = prefix;
            this.violations = violations;
        }

        boolean has(String key) {
            return node.hasNonNull(key);
        }

        void violation(String key, String rule) {
            violations.add(new ConfigViolation(prefix + key, rule));
        }

        private JsonNode required(String key) {
            JsonNode v = node.get(key);
            if (v == null || v.isNull()) {
                violation(key, "is required");
                return null;
            }
            return v;
        }

        int integer(String key) {
            long v = longInteger(key);
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                violation(key, "must fit in 32 bits, got " + v);
                return 0;
            }
            return (int) v;
        }

        long longInteger(String key) {
            JsonNode v = required(key);
            if (v == null) {
                return 0;
            }
            if (v.isIntegralNumber() && v.canConvertToLong()) {
                return v.longValue();
            }
            if (v.isFloatingPointNumber() && v.doubleValue() == Math.rint(v.doubleValue())
                    && Math.abs(v.doubleValue()) < 1e15) {
                return (long) v.doubleValue();
            }
            violation(key, "must be an integer, got " + v);
            return 0;
        }

        double number(String key, Double fallback) {
            JsonNode v = node.get(key);
            if ((v == null || v.isNull()) && fallback != null) {
                return fallback;
            }
            v = required(key);
            if (v == null) {
                return 0;
            }
            if (!v.isNumber()) {
                violation(key, "must be a number, got " + v);
                return 0;
            }
            return v.doubleValue();
        }

        boolean bool(String key, Boolean fallback) {
            JsonNode v = node.get(key);
            if ((v == null || v.isNull()) && fallback != null) {
                return fallback;
            }
            v = required(key);
            if (v == null) {
                return false;
            }
            if (!v.isBoolean()) {
                violation(key, "must be true or false, got " + v);
                return false;
            }
            return v.booleanValue();
        }

        String string(String key, String fallback) {
            JsonNode v = node.get(key);
            if ((v == null || v.isNull()) && fallback != null) {
                return fallback;
            }
            v = required(key);
            if (v == null) {
                return "";
            }
            if (!v.isString()) {
                violation(key, "must be a string, got " + v);
                return "";
            }
            return v.stringValue();
        }

        List<Integer> intList(String key) {
            JsonNode v = required(key);
            if (v == null) {
                return List.of();
            }
            if (!v.isArray()) {
                violation(key, "must be an array of integers, got " + v);
                return List.of();
            }
            var out = new ArrayList<Integer>(v.size());
            for (int i = 0; i < v.size(); i++) {
                JsonNode e = v.get(i);
                if (!e.isIntegralNumber() || !e.canConvertToInt()) {
                    violation(key + "[" + i + "]", "must be an integer, got " + e);
                    return List.of();
                }
                out.add(e.intValue());
            }
            return out;
        }

        List<String> stringList(String key) {
            JsonNode v = required(key);
            if (v == null) {
                return List.of();
            }
            if (!v.isArray()) {
                violation(key, "must be an array of strings, got " + v);
                return List.of();
            }
            var out = new ArrayList<String>(v.size());
            for (int i = 0; i < v.size(); i++) {
                if (!v.get(i).isString()) {
                    violation(key + "[" + i + "]", "must be a string");
                    return List.of();
                }
                out.add(v.get(i).stringValue());
            }
            return out;
        }

        /** A nested object, or null when the key is absent (optional blocks). */
        Fields object(String key) {
            JsonNode v = node.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isObject()) {
                violation(key, "must be an object, got " + v);
                return null;
            }
            return new Fields(v, prefix + key + ".", violations);
        }
    }
}
