"""Byte model of one DeepSeek-V4 decode step (pure Python, no torch): what a decode step over a slice of
layers must move through HBM at least, in a given storage format.

    from v4_roofline import FLASH, OURS, PEER_BF16, step_bytes, flash_ratios
    c = step_bytes(64, 32768, flash_ratios(8), FLASH)            # our engine's formats
    c = step_bytes(64, 32768, flash_ratios(8), FLASH, PEER_BF16)  # the PyTorch peer's formats
    c["total"] / copy_bandwidth_bytes_per_s                       # roofline seconds

Counted (per step, summed over the layers, every sequence at position context-1 so every compressor
closes a block — the step of the most work; 1/r of the steps on a layer of ratio r):
  weights    every attention, indexer, compressor, HC, norm, gate and shared-expert weight of the slice
             (read once per step whatever the batch), and the routed experts the batch is expected to
             touch: E * (1 - (1 - k/E)^B) distinct experts per layer (k of E chosen uniformly; hash layers
             are treated the same way)
  kv_read    per sequence and layer: the 128-entry window; C4A: min(topk, ctx/4) selected compressed
             entries plus every indexer key (ctx/4); C128A: every compressed entry (ctx/128)
  kv_write   per sequence and layer: the new window entry, the compressed entries closed this step
  state      per sequence and compressed layer: the compressor state written (one position) and read at
             the block close (2r positions for ratio 4, r for 128)
  head       with head=True: the output head (bf16 [vocab, dim]), its HC mix and the final norm, read
             once per step whatever the batch (the decode benchmark's step computes logits)
Not counted: activations (a few KiB per token per layer), the indexer's intermediate scores, the embedding
rows (a few KiB).
"""
import math

# V4-Flash (config.json of deepseek-ai/DeepSeek-V4-Flash; see shared docs v4-architecture.md §1)
FLASH = {
    "dim": 4096, "heads": 64, "head_dim": 512, "rope_dim": 64, "q_lora": 1024,
    "o_groups": 8, "o_lora": 1024, "window": 128,
    "experts": 256, "topk_experts": 6, "shared_experts": 1, "moe_inter": 2048, "num_hash_layers": 3,
    "index_heads": 64, "index_dim": 128, "index_topk": 512, "hc": 4,
    "compress_ratios": [0, 0] + [4, 128] * 20 + [4, 0],
    "vocab": 129280,
}

# Storage formats. fp8_scale: bytes per 128x128 block scale; fp4_scale: bytes per 32-element scale.
OURS = {
    "name": "ours", "fp8_scale": 1, "fp4_scale": 1, "wo_a": "fp8", "compressor_w": 2, "small_f32": 4,
    "main_entry": 584, "index_entry": 68, "state_elem": 4,
}
# The PyTorch peer (bench_torch_peer.py): same FP8/FP4 weights but float32 FP8 block scales, wo_a in bf16
# and the compressor projections in fp32 as the reference holds them, and bf16 caches (1024 B main
# entries, 256 B indexer keys).
PEER_BF16 = {
    "name": "peer_bf16", "fp8_scale": 4, "fp4_scale": 1, "wo_a": "bf16", "compressor_w": 4, "small_f32": 4,
    "main_entry": 1024, "index_entry": 256, "state_elem": 4,
}


def flash_ratios(layers):
    """The first `layers` compress ratios of V4-Flash's schedule."""
    return list(FLASH["compress_ratios"][:layers])


def fp8_bytes(rows, cols, fmt):
    return rows * cols + math.ceil(rows / 128) * math.ceil(cols / 128) * fmt["fp8_scale"]


def fp4_bytes(rows, cols, fmt):
    return rows * cols // 2 + rows * math.ceil(cols / 32) * fmt["fp4_scale"]


def expected_distinct_experts(batch, experts=256, k=6):
    """Expected number of distinct experts `batch` tokens route to, each picking k of `experts` uniformly."""
    return experts * (1.0 - (1.0 - k / experts) ** batch)


def layer_weight_bytes(ratio, cfg, fmt):
    """Bytes of one layer's non-routed weights: attention (+compressor, +indexer), HC, norms, gate, shared."""
    D, H, hd, ql = cfg["dim"], cfg["heads"], cfg["head_dim"], cfg["q_lora"]
    f4 = fmt["small_f32"]
    attn = fp8_bytes(ql, D, fmt) + fp8_bytes(H * hd, ql, fmt) + fp8_bytes(hd, D, fmt)
    wo_a_rows, wo_a_cols = cfg["o_groups"] * cfg["o_lora"], H * hd // cfg["o_groups"]
    attn += fp8_bytes(wo_a_rows, wo_a_cols, fmt) if fmt["wo_a"] == "fp8" else wo_a_rows * wo_a_cols * 2
    attn += fp8_bytes(D, cfg["o_groups"] * cfg["o_lora"], fmt)
    attn += (ql + hd + H) * f4                                   # q_norm, kv_norm, attn_sink
    comp = 0
    if ratio:
        coff = 2 if ratio == 4 else 1
        comp += 2 * coff * hd * D * fmt["compressor_w"] + (hd + ratio * coff * hd) * f4
    idx = 0
    if ratio == 4:
        ih, idim = cfg["index_heads"], cfg["index_dim"]
        idx += fp8_bytes(ih * idim, ql, fmt) + ih * D * 2          # wq_b (FP8), weights_proj (bf16)
        idx += 2 * 2 * idim * D * fmt["compressor_w"] + (idim + 4 * 2 * idim) * f4
    mix = (2 + cfg["hc"]) * cfg["hc"]
    hc = 2 * (mix * cfg["hc"] * D + mix + 3) * f4
    norms = 2 * D * f4
    gate = cfg["experts"] * D * 2 + cfg["experts"] * f4
    inter = cfg["moe_inter"]
    shared = cfg["shared_experts"] * (2 * fp8_bytes(inter, D, fmt) + fp8_bytes(D, inter, fmt))
    return {"attn": attn, "compressor": comp, "indexer": idx, "hc_norm_gate": hc + norms + gate,
            "shared_expert": shared}


def expert_bytes(cfg, fmt):
    D, inter = cfg["dim"], cfg["moe_inter"]
    return 2 * fp4_bytes(inter, D, fmt) + fp4_bytes(D, inter, fmt)


def head_bytes(cfg, fmt):
    """The output head (bf16), the head's HC mix (fp32 [hc, hc*dim] + base + scale) and the final norm."""
    D, hc, f4 = cfg["dim"], cfg["hc"], fmt["small_f32"]
    return cfg["vocab"] * D * 2 + (hc * hc * D + hc + 1) * f4 + D * f4


def step_bytes(batch, context, layers_ratios, config=FLASH, fmt=OURS, head=False):
    """Bytes one decode step of `batch` sequences at `context` tokens moves over the layers whose compress
    ratios are `layers_ratios` (layer i is hash-routed if i < num_hash_layers), plus the output head when
    `head`. Returns a dict of components (bytes, floats where an expectation is involved) and their 'total'."""
    cfg = config
    hd, W = cfg["head_dim"], cfg["window"]
    out = {"weights_attn": 0, "weights_compressor": 0, "weights_indexer": 0, "weights_hc_norm_gate": 0,
           "weights_shared_expert": 0, "weights_routed_experts": 0.0, "weights_head": head_bytes(cfg, fmt) if head else 0,
           "kv_window": 0, "kv_compressed": 0, "kv_indexer_keys": 0, "kv_write": 0.0, "compressor_state": 0.0}
    distinct = expected_distinct_experts(batch, cfg["experts"], cfg["topk_experts"])
    e_bytes = expert_bytes(cfg, fmt)
    for ratio in layers_ratios:
        w = layer_weight_bytes(ratio, cfg, fmt)
        out["weights_attn"] += w["attn"]
        out["weights_compressor"] += w["compressor"]
        out["weights_indexer"] += w["indexer"]
        out["weights_hc_norm_gate"] += w["hc_norm_gate"]
        out["weights_shared_expert"] += w["shared_expert"]
        out["weights_routed_experts"] += distinct * e_bytes
        out["kv_window"] += batch * W * fmt["main_entry"]
        out["kv_write"] += batch * fmt["main_entry"]
        if ratio == 4:
            n = context // 4
            out["kv_compressed"] += batch * min(cfg["index_topk"], n) * fmt["main_entry"]
            out["kv_indexer_keys"] += batch * n * fmt["index_entry"]
            out["kv_write"] += batch * (fmt["main_entry"] + fmt["index_entry"])
            # main state [kv|score] of 2*hd each, indexer state 2*index_dim each: write 1, read 8 positions
            per_pos = 2 * (2 * hd) * fmt["state_elem"] + 2 * (2 * cfg["index_dim"]) * fmt["state_elem"]
            out["compressor_state"] += batch * per_pos * (1 + 2 * 4)
        elif ratio == 128:
            out["kv_compressed"] += batch * (context // 128) * fmt["main_entry"]
            out["kv_write"] += batch * fmt["main_entry"]
            per_pos = 2 * hd * fmt["state_elem"]
            out["compressor_state"] += batch * per_pos * (1 + 128)
        elif ratio != 0:
            raise ValueError("unknown compress ratio %r" % ratio)
    out["weights"] = sum(v for k, v in out.items() if k.startswith("weights_"))
    out["kv"] = out["kv_window"] + out["kv_compressed"] + out["kv_indexer_keys"]
    out["total"] = out["weights"] + out["kv"] + out["kv_write"] + out["compressor_state"]
    out["distinct_experts_per_layer"] = distinct
    return out


def roofline_ms(total_bytes, bandwidth_gb_s):
    """Milliseconds to move `total_bytes` at `bandwidth_gb_s` (GB/s, 1e9)."""
    return total_bytes / (bandwidth_gb_s * 1e9) * 1e3


if __name__ == "__main__":
    r = flash_ratios(8)
    for b in (1, 8, 64, 256):
        for c in (8192, 32768, 131072):
            o, p = step_bytes(b, c, r, FLASH, OURS), step_bytes(b, c, r, FLASH, PEER_BF16)
            print("B=%3d ctx=%6d  ours %8.1f MB (weights %8.1f, kv %8.1f)   peer %8.1f MB"
                  % (b, c, o["total"] / 1e6, o["weights"] / 1e6, o["kv"] / 1e6, p["total"] / 1e6))
