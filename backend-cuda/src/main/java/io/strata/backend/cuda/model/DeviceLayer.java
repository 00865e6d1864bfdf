package io.strata.backend.cuda.model;

import io.strata.model.checkpoint.TensorSet;
import io.strata.model.config.LayerKind;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

import java.util.List;

/**
 * One transformer block's weights on the device, in their checkpoint formats: the two hyper-connection
 * mixes and norms, the attention projections, the compressor and indexer of compressed layers, the MoE.
 */
final class DeviceLayer {

    /** A hyper-connection mix: fn fp32 [(2+hc)·hc, hc·dim], base fp32 [(2+hc)·hc], scale fp32 [3]. */
    record Mix(long fn, long base, long scale) {
    }

    /**
     * Gated pooling weights: wkv and wgate (fp32 linears), ape fp32 [ratio, coff·hd], norm fp32 [hd]. projections:
     * wkv and wgate stacked into one [2·width, dim] matrix (one GEMM), or the two apart when their dtypes differ;
     * either way their outputs lie side by side, a token's kv row then its score row.
     */
    record Compressor(List<DeviceMatrix> projections, long ape, long norm, int ratio, int headDim) {
        int width() {
            return (ratio == 4 ? 2 : 1) * headDim;
        }
    }

    /** The lightning indexer of a C4A layer. */
    record Indexer(DeviceMatrix wqB, DeviceMatrix weightsProj, Compressor compressor) {
    }

    final LayerSpec spec;
    final LayerKind kind;
    final long attnNorm;
    final long ffnNorm;
    final Mix hcAttn;
    final Mix hcFfn;
    final DeviceMatrix wqA;
    /** wq_a and wkv stacked ([q_lora + head_dim, dim]): one GEMM for both, when their weights stack; else null. */
    final DeviceMatrix wqkvA;
    final long qNorm;
    final DeviceMatrix wqB;
    final DeviceMatrix wkv;
    final long kvNorm;
    final DeviceMatrix woA;
    final DeviceMatrix woB;
    final long sink;
    final Compressor compressor;
    final Indexer indexer;
    final DeviceMoe moe;

    DeviceLayer(WeightStore store, TensorSet src, ModelConfig cfg, LayerSpec spec) {
        this.spec = spec;
        this.kind = spec.kind();
        var a = cfg.attention();
        int dim = cfg.hiddenSize();
        int hc = cfg.hyperConnections().mult();
        int mix = (2 + hc) * hc;
        String p = spec.weightPrefix();
        attnNorm = floats(store, src, p + "attn_norm.weight", dim);
        ffnNorm = floats(store, src, p + "ffn_norm.weight", dim);
        hcAttn = new Mix(floats(store, src, p + "hc_attn_fn", (long) mix * hc * dim),
            floats(store, src, p + "hc_attn_base", mix), floats(store, src, p + "hc_attn_scale", 3));
        hcFfn = new Mix(floats(store, src, p + "hc_ffn_fn", (long) mix * hc * dim),
            floats(store, src, p + "hc_ffn_base", mix), floats(store, src, p + "hc_ffn_scale", 3));
        String at = p + "attn";
        int qw = a.numHeads() * a.headDim();
        wqkvA = DeviceMatrix.loadStacked(store, src, List.of(at + ".wq_a", at + ".wkv"),
            new int[] {a.qLoraRank(), a.headDim()}, dim);
        wqA = wqkvA != null ? wqkvA.rowRange(0, a.qLoraRank()) : DeviceMatrix.load(store, src, at + ".wq_a", a.qLoraRank(), dim);
        qNorm = floats(store, src, at + ".q_norm.weight", a.qLoraRank());
        wqB = DeviceMatrix.load(store, src, at + ".wq_b", qw, a.qLoraRank());
        wkv = wqkvA != null ? wqkvA.rowRange(a.qLoraRank(), a.headDim())
            : DeviceMatrix.load(store, src, at + ".wkv", a.headDim(), dim);
        kvNorm = floats(store, src, at + ".kv_norm.weight", a.headDim());
        woA = DeviceMatrix.load(store, src, at + ".wo_a", a.oGroups() * a.oLoraRank(), qw / a.oGroups());
        woB = DeviceMatrix.load(store, src, at + ".wo_b", dim, a.oGroups() * a.oLoraRank());
        sink = floats(store, src, at + ".attn_sink", a.numHeads());
        compressor = kind.hasCompressor()
            ? compressor(store, src, at + ".compressor", kind.compressRatio(), a.headDim(), dim) : null;
        if (kind.hasIndexer()) {
            var ix = cfg.indexer();
            String ip = at + ".indexer";
            indexer = new Indexer(DeviceMatrix.load(store, src, ip + ".wq_b", ix.numHeads() * ix.headDim(), a.qLoraRank()),
                DeviceMatrix.load(store, src, ip + ".weights_proj", ix.numHeads(), dim),
                compressor(store, src, ip + ".compressor", 4, ix.headDim(), dim));
        } else {
            indexer = null;
        }
        moe = DeviceMoe.load(store, src, cfg, spec);
    }

    /** Whether the attention's first projection (stacked or wq_a alone, and wkv) FP8-round-trips its input x. */
    boolean attentionQuantizesInput() {
        return wqA.format().quantizesInput() || wkv.format().quantizesInput();
    }

    /** Whether an up-projection of the q latent (wq_b, the indexer's wq_b) FP8-round-trips it. */
    boolean latentQuantized() {
        return wqB.format().quantizesInput() || (indexer != null && indexer.wqB().format().quantizesInput());
    }

    private static Compressor compressor(WeightStore store, TensorSet src, String prefix, int ratio, int headDim, int dim) {
        int width = (ratio == 4 ? 2 : 1) * headDim;
        DeviceMatrix kvGate = DeviceMatrix.loadStacked(store, src, List.of(prefix + ".wkv", prefix + ".wgate"),
            new int[] {width, width}, dim);
        List<DeviceMatrix> projections = kvGate != null ? List.of(kvGate)
            : List.of(DeviceMatrix.loadTensor(store, src, prefix + ".wkv.weight", width, dim),
                DeviceMatrix.loadTensor(store, src, prefix + ".wgate.weight", width, dim));
        return new Compressor(projections,
            floats(store, src, prefix + ".ape", (long) ratio * width), floats(store, src, prefix + ".norm.weight", headDim),
            ratio, headDim);
    }

    /** A small tensor (norm, mix, sink, ape) as fp32 on the device, whatever its stored dtype. */
    static long floats(WeightStore store, TensorSet src, String name, long n) {
        var t = src.tensor(name);
        if (t.elementCount() != n) {
            throw new IllegalArgumentException("tensor " + name + ": expected " + n + " values, found " + t.elementCount());
        }
        return store.upload(t.toFloatArray()).address();
    }
}
