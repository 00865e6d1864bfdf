package io.strata.model.catalogue;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedMap;

import io.strata.model.checkpoint.DType;
import io.strata.model.config.AttentionConfig;
import io.strata.model.config.ExpertDtype;
import io.strata.model.config.IndexerConfig;
import io.strata.model.config.LayerKind;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;
import io.strata.model.format.BlockDequant;

/**
 * Every tensor a Hugging Face-format DeepSeek-V4 checkpoint of a given config holds (names without a
 * {@code model.} prefix, as released): globals, each trunk layer {@code layers.N.*} and each MTP block
 * {@code mtp.K.*}, with on-disk dtype and shape. Linears are FP8 e4m3 + ue8m0 {@code .scale} in a quantized
 * checkpoint and BF16 otherwise; routed experts follow {@code expert_dtype}.
 */
public final class WeightCatalogue {

    private final ModelConfig config;
    private final SequencedMap<String, TensorSpec> specs;

    private WeightCatalogue(ModelConfig config, SequencedMap<String, TensorSpec> specs) {
        this.config = config;
        this.specs = Collections.unmodifiableSequencedMap(specs);
    }

    public static WeightCatalogue of(ModelConfig config) {
        var b = new Builder(config);
        b.globals();
        for (LayerSpec layer : config.schedule().layers()) {
            b.layer(layer);
        }
        return new WeightCatalogue(config, b.specs);
    }

    public ModelConfig config() {
        return config;
    }

    /** All expected tensors in a stable order (globals, then layer by layer). */
    public SequencedMap<String, TensorSpec> specs() {
        return specs;
    }

    public Optional<TensorSpec> find(String name) {
        return Optional.ofNullable(specs.get(name));
    }

    public int size() {
        return specs.size();
    }

    /** Total bytes of the expected tensors (the checkpoint's data size). */
    public long totalBytes() {
        return specs.values().stream().mapToLong(TensorSpec::byteSize).sum();
    }

    /** Tensor count per dtype. */
    public Map<DType, Long> countByDtype() {
        var out = new java.util.EnumMap<DType, Long>(DType.class);
        specs.values().forEach(s -> out.merge(s.dtype(), 1L, Long::sum));
        return out;
    }

    private static final class Builder {
        private final ModelConfig c;
        private final SequencedMap<String, TensorSpec> specs = new LinkedHashMap<>();
        private final int d;

        Builder(ModelConfig c) {
            this.c = c;
            this.d = c.hiddenSize();
        }

        private void add(String name, DType dtype, int... shape) {
            if (specs.putIfAbsent(name, TensorSpec.of(name, dtype, shape)) != null) {
                throw new IllegalStateException("catalogue lists " + name + " twice");
            }
        }

        /** A linear layer [out, in] stored as the checkpoint stores its dense linears. */
        private void linear(String name, int out, int in) {
            if (c.quantized()) {
                add(name + ".weight", DType.F8_E4M3, out, in);
                add(name + ".scale", DType.F8_E8M0, BlockDequant.fp8ScaleShape(out, in));
            } else {
                add(name + ".weight", DType.BF16, out, in);
            }
        }

        private void expertLinear(String name, int out, int in) {
            ExpertDtype e = c.expertDtype();
            switch (e) {
                case FP4 -> {
                    add(name + ".weight", DType.I8, out, in / 2);
                    add(name + ".scale", DType.F8_E8M0, BlockDequant.fp4ScaleShape(out, in));
                }
                case FP8 -> {
                    add(name + ".weight", DType.F8_E4M3, out, in);
                    add(name + ".scale", DType.F8_E8M0, BlockDequant.fp8ScaleShape(out, in));
                }
                case BF16 -> add(name + ".weight", DType.BF16, out, in);
            }
        }

        private void headMix(String prefix) {
            int hc = c.hyperConnections().mult();
            add(prefix + "hc_head_fn", DType.F32, hc, hc * d);
            add(prefix + "hc_head_base", DType.F32, hc);
            add(prefix + "hc_head_scale", DType.F32, 1);
        }

        void globals() {
            add("embed.weight", DType.BF16, c.vocabSize(), d);
            add("head.weight", DType.BF16, c.vocabSize(), d);
            add("norm.weight", DType.BF16, d);
            headMix("");
        }

        void layer(LayerSpec layer) {
            String p = layer.weightPrefix();
            AttentionConfig a = c.attention();
            int hd = a.headDim();
            int hc = c.hyperConnections().mult();
            int mixes = c.hyperConnections().mixCount();

            add(p + "attn_norm.weight", DType.BF16, d);
            add(p + "ffn_norm.weight", DType.BF16, d);
            for (String sub : new String[] {"attn", "ffn"}) {
                add(p + "hc_" + sub + "_fn", DType.F32, mixes, hc * d);
                add(p + "hc_" + sub + "_base", DType.F32, mixes);
                add(p + "hc_" + sub + "_scale", DType.F32, 3);
            }

            String at = p + "attn.";
            add(at + "q_norm.weight", DType.BF16, a.qLoraRank());
            add(at + "kv_norm.weight", DType.BF16, hd);
            add(at + "attn_sink", DType.F32, a.numHeads());
            linear(at + "wq_a", a.qLoraRank(), d);
            linear(at + "wq_b", a.numHeads() * hd, a.qLoraRank());
            linear(at + "wkv", hd, d);
            linear(at + "wo_a", a.oGroups() * a.oLoraRank(), a.oGroupInputDim());
            linear(at + "wo_b", d, a.oGroups() * a.oLoraRank());

            LayerKind kind = layer.kind();
            if (kind.hasCompressor()) {
                compressor(at + "compressor.", kind.compressRatio(), kind.compressorWidthFactor(), hd);
            }
            if (kind.hasIndexer()) {
                IndexerConfig ix = c.indexer();
                String in = at + "indexer.";
                linear(in + "wq_b", ix.numHeads() * ix.headDim(), a.qLoraRank());
                add(in + "weights_proj.weight", DType.BF16, ix.numHeads(), d);
                compressor(in + "compressor.", kind.compressRatio(), kind.compressorWidthFactor(), ix.headDim());
            }

            String ffn = p + "ffn.";
            int experts = c.moe().numRoutedExperts();
            int inter = c.moe().intermediateSize();
            add(ffn + "gate.weight", DType.BF16, experts, d);
            if (layer.hashRouted()) {
                add(ffn + "gate.tid2eid", DType.I64, c.vocabSize(), c.moe().numExpertsPerToken());
            } else {
                add(ffn + "gate.bias", DType.F32, experts);
            }
            for (int e = 0; e < experts; e++) {
                String ex = ffn + "experts." + e + ".";
                expertLinear(ex + "w1", inter, d);
                expertLinear(ex + "w2", d, inter);
                expertLinear(ex + "w3", inter, d);
            }
            linear(ffn + "shared_experts.w1", inter, d);
            linear(ffn + "shared_experts.w2", d, inter);
            linear(ffn + "shared_experts.w3", inter, d);

            if (layer.mtp()) {
                linear(p + "e_proj", d, d);
                linear(p + "h_proj", d, d);
                add(p + "enorm.weight", DType.BF16, d);
                add(p + "hnorm.weight", DType.BF16, d);
                add(p + "norm.weight", DType.BF16, d);
                headMix(p);
            }
        }

        private void compressor(String prefix, int ratio, int widthFactor, int headDim) {
            add(prefix + "wkv.weight", DType.BF16, widthFactor * headDim, d);
            add(prefix + "wgate.weight", DType.BF16, widthFactor * headDim, d);
            add(prefix + "norm.weight", DType.BF16, headDim);
            add(prefix + "ape", DType.F32, ratio, widthFactor * headDim);
        }
    }
}
