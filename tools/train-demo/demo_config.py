"""The demo model's config.json and the checkpoint's tensor catalogue (names, dtypes, shapes), torch-free.

The catalogue follows what Strata's loader expects (backend-spi WeightCatalogue): no MTP block is written,
so the config has num_nextn_predict_layers 0 and one compress_ratios entry per trunk layer (a trailing MTP
entry would make the loader require mtp.0.* tensors; SyntheticCheckpoint writes the same MTP-free layout).
"""
import json
import math

# three trunk layers, one of each kind: 4 layers would put the FP8/FP4 folder over its 12 MB budget
N_LAYERS_RATIOS = [0, 4, 128]


def load_json(path):
    with open(path) as f:
        return json.load(f)


def demo_config(vocab=4096, experts=12):
    """HF V4 config of the demo model: every key as the fixtures' config, sizes from issue 17."""
    return {
        "architectures": ["DeepseekV4ForCausalLM"],
        "model_type": "deepseek_v4",
        "vocab_size": vocab,
        "hidden_size": 256,
        "num_hidden_layers": len(N_LAYERS_RATIOS),
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 512,
        "qk_rope_head_dim": 64,
        "q_lora_rank": 128,
        "o_groups": 2,
        "o_lora_rank": 128,
        "sliding_window": 128,
        "compress_ratios": list(N_LAYERS_RATIOS),
        "compress_rope_theta": 160000.0,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 65536,
                         "beta_fast": 32, "beta_slow": 1},
        "max_position_embeddings": 1048576,
        "index_n_heads": 8,
        "index_head_dim": 128,
        # >= the compressed entries of every context the demo trains and evaluates on (1024 / 4 = 256),
        # so the indexer keeps every visible entry there (see README: the indexer is not trained)
        "index_topk": 256,
        "n_routed_experts": experts,
        "num_experts_per_tok": 2,
        "n_shared_experts": 1,
        "moe_intermediate_size": 128,
        "num_hash_layers": 1,
        "scoring_func": "sqrtsoftplus",
        "topk_method": "noaux_tc",
        "norm_topk_prob": True,
        "routed_scaling_factor": 1.5,
        "swiglu_limit": 10.0,
        "hidden_act": "silu",
        "hc_mult": 4,
        "hc_sinkhorn_iters": 20,
        "hc_eps": 1e-06,
        "num_nextn_predict_layers": 0,
        "rms_norm_eps": 1e-06,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
        "torch_dtype": "bfloat16",
        "use_cache": True,
    }


QUANT = {"quant_method": "fp8", "fmt": "e4m3", "scale_fmt": "ue8m0", "weight_block_size": [128, 128],
         "activation_scheme": "dynamic"}


def quantized_config(cfg):
    q = dict(cfg)
    q["expert_dtype"] = "fp4"
    q["quantization_config"] = dict(QUANT)
    return q


def linear_kind(name):
    """How a 2-D weight is stored in the quantized checkpoint: 'fp8', 'fp4' or None (kept as in BF16)."""
    if ".ffn.experts." in name:
        return "fp4"
    for s in (".attn.wq_a.weight", ".attn.wq_b.weight", ".attn.wkv.weight", ".attn.wo_a.weight",
              ".attn.wo_b.weight", ".indexer.wq_b.weight", ".shared_experts.w1.weight",
              ".shared_experts.w2.weight", ".shared_experts.w3.weight", ".e_proj.weight", ".h_proj.weight"):
        if name.endswith(s):
            return "fp8"
    return None


def tensor_specs(cfg, quantized, with_mtp=False):
    """{name: (safetensors dtype, shape)} of every tensor the checkpoint holds."""
    d = cfg["hidden_size"]
    hc = cfg["hc_mult"]
    mix = (2 + hc) * hc
    h = cfg["num_attention_heads"]
    hd = cfg["head_dim"]
    ql = cfg["q_lora_rank"]
    g = cfg["o_groups"]
    ol = cfg["o_lora_rank"]
    e = cfg["n_routed_experts"]
    k = cfg["num_experts_per_tok"]
    inter = cfg["moe_intermediate_size"]
    ih, ihd = cfg["index_n_heads"], cfg["index_head_dim"]
    v = cfg["vocab_size"]
    n = cfg["num_hidden_layers"]
    specs = {}

    def add(name, dt, *shape):
        specs[name] = (dt, tuple(shape))

    def lin(name, out, inn):
        kind = linear_kind(name + ".weight") if quantized else None
        if kind == "fp8":
            add(name + ".weight", "F8_E4M3", out, inn)
            add(name + ".scale", "F8_E8M0", -(-out // 128), -(-inn // 128))
        elif kind == "fp4":
            add(name + ".weight", "I8", out, inn // 2)
            add(name + ".scale", "F8_E8M0", out, inn // 32)
        else:
            add(name + ".weight", "BF16", out, inn)

    def head_mix(p):
        add(p + "hc_head_fn", "F32", hc, hc * d)
        add(p + "hc_head_base", "F32", hc)
        add(p + "hc_head_scale", "F32", 1)

    def compressor(p, ratio, hdim):
        coff = 2 if ratio == 4 else 1
        add(p + "wkv.weight", "BF16", coff * hdim, d)
        add(p + "wgate.weight", "BF16", coff * hdim, d)
        add(p + "norm.weight", "BF16", hdim)
        add(p + "ape", "F32", ratio, coff * hdim)

    add("embed.weight", "BF16", v, d)
    add("head.weight", "BF16", v, d)
    add("norm.weight", "BF16", d)
    head_mix("")
    layers = list(range(n)) + ([n] if with_mtp else [])
    for i in layers:
        mtp = i >= n
        p = "mtp.0." if mtp else "layers.%d." % i
        ratio = cfg["compress_ratios"][i]
        add(p + "attn_norm.weight", "BF16", d)
        add(p + "ffn_norm.weight", "BF16", d)
        for sub in ("attn", "ffn"):
            add(p + "hc_%s_fn" % sub, "F32", mix, hc * d)
            add(p + "hc_%s_base" % sub, "F32", mix)
            add(p + "hc_%s_scale" % sub, "F32", 3)
        a = p + "attn."
        add(a + "q_norm.weight", "BF16", ql)
        add(a + "kv_norm.weight", "BF16", hd)
        add(a + "attn_sink", "F32", h)
        lin(a + "wq_a", ql, d)
        lin(a + "wq_b", h * hd, ql)
        lin(a + "wkv", hd, d)
        lin(a + "wo_a", g * ol, h * hd // g)
        lin(a + "wo_b", d, g * ol)
        if ratio > 0:
            compressor(a + "compressor.", ratio, hd)
        if ratio == 4:
            lin(a + "indexer.wq_b", ih * ihd, ql)
            add(a + "indexer.weights_proj.weight", "BF16", ih, d)
            compressor(a + "indexer.compressor.", ratio, ihd)
        f = p + "ffn."
        add(f + "gate.weight", "BF16", e, d)
        if not mtp and i < cfg["num_hash_layers"]:
            add(f + "gate.tid2eid", "I64", v, k)
        else:
            add(f + "gate.bias", "F32", e)
        for j in range(e):
            lin(f + "experts.%d.w1" % j, inter, d)
            lin(f + "experts.%d.w2" % j, d, inter)
            lin(f + "experts.%d.w3" % j, inter, d)
        lin(f + "shared_experts.w1", inter, d)
        lin(f + "shared_experts.w2", d, inter)
        lin(f + "shared_experts.w3", inter, d)
        if mtp:
            lin(p + "e_proj", d, d)
            lin(p + "h_proj", d, d)
            add(p + "enorm.weight", "BF16", d)
            add(p + "hnorm.weight", "BF16", d)
            add(p + "norm.weight", "BF16", d)
            head_mix(p)
    return specs


_SIZE = {"BF16": 2, "F32": 4, "I64": 8, "F8_E4M3": 1, "F8_E8M0": 1, "I8": 1}


def checkpoint_bytes(specs):
    return sum(_SIZE[dt] * math.prod(shape) for dt, shape in specs.values())


def param_count(cfg):
    """Trainable values (tid2eid excluded; an FP8/FP4 weight counts its logical elements)."""
    n = 0
    for name, (dt, shape) in tensor_specs(cfg, quantized=False).items():
        if name.endswith("tid2eid"):
            continue
        n += math.prod(shape)
    return n


def layer_kinds(cfg):
    names = {0: "SWA (window 128)", 4: "C4A (ratio 4 + indexer)", 128: "C128A (ratio 128)"}
    return [names[r] for r in cfg["compress_ratios"][:cfg["num_hidden_layers"]]]


if __name__ == "__main__":
    c = demo_config()
    print(param_count(c), checkpoint_bytes(tensor_specs(c, False)), checkpoint_bytes(tensor_specs(c, True)))
