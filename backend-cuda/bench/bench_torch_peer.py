#!/usr/bin/env python3
"""The PyTorch peer of issue 14: one decode step of the first N layers of DeepSeek-V4-Flash written the
straightforward way a PyTorch user would (eager, and torch.compile of the step), on one GPU.

What one step does, per layer (shared docs v4-architecture.md §2): HC pre (Sinkhorn), RMSNorm, q LoRA + q norm,
kv projection + norm, RoPE, FP8 round trip of the kv's 448 no-rope dims, window insert; on ratio-4/128
layers the compressor step (fp32 state tensors; this step closes a block), on ratio-4 layers the lightning
indexer over every compressed entry (scores, ReLU, head weights, top-512) and the gather of the selected
entries; attention with the sink over [window | compressed], inverse RoPE, grouped wo_a, wo_b, HC post;
then HC pre, RMSNorm, MoE (sqrtsoftplus gate, bias top-6 or the token->expert table on hash layers,
normalise, x1.5; a loop over the experts that received tokens that dequantises each expert's FP4 weights
and runs the clamped SwiGLU, index_add into the output; the FP8 shared expert), HC post.

Storage: FP8 e4m3 linears with float32 power-of-two 128x128 block scales, dequantised per call
(`w.float() * scale` broadcast per block, then bf16); routed experts as packed FP4 e2m1 bytes (low nibble
first) with ue8m0 bytes per 32, dequantised per call through a 16-entry table; wo_a bf16 and the
compressor projections fp32, as the reference holds them. Caches are bf16 (a PyTorch user's choice;
main/window entries 1024 B, indexer keys 256 B), pre-filled with random data for the context, compressor
states fp32. Activations bf16, fp32 where the reference accumulates (norms, HC, gate, compressor, SwiGLU).
Not done (a user emulating FP8 with bf16 weights would not either): FP8 quantisation of the linears'
activations. Every sequence is at position context-1, the step where every compressor closes a block.

The same run measures the device-to-device copy bandwidth and gives, per shape, the bytes the step must
move in our engine's formats (v4_roofline.py) and the roofline time at the measured bandwidth.

usage (GPU host):
  python3 backend-cuda/bench/bench_torch_peer.py --layers 8 --contexts 8192,32768,131072 --batches 1,8,64,256 \\
      --modes eager,compile --compile-shapes 1x8192,64x8192 --steps 10 --budget-s 240 --out $OUT/peer.json
  python3 backend-cuda/bench/bench_torch_peer.py --dry-run       (anywhere: the shape/byte/memory plan, no torch)
"""
import argparse
import gc
import json
import math
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import v4_roofline as rf  # noqa: E402

torch = None   # imported in main() so that --dry-run runs without torch
F = None
FP4_TABLE = FP4_GRID = FP4_MIDS = HADAMARD = None   # device constants, set in main()

# ----------------------------------------------------------------------------------------------------
# V4-Flash dimensions (config.json; v4-architecture.md §1)

C = rf.FLASH
D, H, HD, RD = C["dim"], C["heads"], C["head_dim"], C["rope_dim"]
NOPE = HD - RD
QL, G, OL, W = C["q_lora"], C["o_groups"], C["o_lora"], C["window"]
E, K, INTER = C["experts"], C["topk_experts"], C["moe_inter"]
IH, ID, ITOPK, HC = C["index_heads"], C["index_dim"], C["index_topk"], C["hc"]
MIX = (2 + HC) * HC
N_HASH = C["num_hash_layers"]
EPS, HC_EPS, SINKHORN_ITERS = 1e-6, 1e-6, 20
ROUTE_SCALE, SWIGLU_LIMIT, VOCAB = 1.5, 10.0, 129280
ROPE_THETA, COMPRESS_ROPE_THETA, YARN_FACTOR, YARN_ORIG, BETA_FAST, BETA_SLOW = 10000.0, 160000.0, 16.0, 65536, 32, 1

GIB = 1 << 30
ASSUMED_COPY_GB_S = 4250.0   # dry run only: the H200 copy rate measured before (anchors.md F4)


# ----------------------------------------------------------------------------------------------------
# plan (standard library only)

def layer_ratios(n):
    return rf.flash_ratios(n)


def peer_weight_bytes(ratios):
    """Resident bytes of the peer's weights (its storage formats) for the layers."""
    total = 0
    fmt = rf.PEER_BF16
    for i, r in enumerate(ratios):
        w = rf.layer_weight_bytes(r, C, fmt)
        total += w["attn"] + w["compressor"] + w["indexer"] + w["hc_norm_gate"] + w["shared_expert"]
        total += E * rf.expert_bytes(C, fmt)
        total += VOCAB * K * 8 if i < N_HASH else 0          # tid2eid, int64
    return total


def peer_cache_bytes(batch, ctx, ratios):
    """Resident bytes of the bf16 caches and fp32 compressor states."""
    total = 0
    for r in ratios:
        total += batch * W * HD * 2
        if r:
            n = ctx // r
            coff = 2 if r == 4 else 1
            total += batch * n * HD * 2 + 2 * batch * coff * r * coff * HD * 4
            if r == 4:
                total += batch * n * ID * 2 + 2 * batch * 8 * 2 * ID * 4
    return total


def peer_workspace_bytes(batch, ctx, ratios):
    """A generous bound on one step's transient tensors: indexer scores (three [B, 64, ctx/4] bf16 at
    once), the gathered/concatenated attention rows, the per-expert dequantisation temporaries (int64 codes,
    fp32 products), the largest FP8 dequantisation (fp32 + bf16 of [32768, 1024]), plus 4 GiB for the
    allocator and compile."""
    idx = 3 * batch * IH * (ctx // 4) * 2 if 4 in ratios else 0
    rows = W + max(ITOPK, ctx // 128 if 128 in ratios else 0)
    attn = 3 * batch * rows * HD * 2 + 2 * batch * H * rows * 4
    expert = 2 * INTER * D * (8 * 3 + 4 + 2 * 2)
    fp8 = H * HD * QL * (4 + 2)
    return idx + attn + expert + fp8 + 4 * GIB


def parse_shapes(text):
    out = set()
    for part in filter(None, (t.strip() for t in text.split(","))):
        b, c = part.lower().split("x")
        out.add((int(b), int(c)))
    return out


def plan(args):
    """The ordered list of (mode, batch, context) to run: each compile shape's eager twin then its compile
    run first, then the other eager shapes by rising cost."""
    modes = [m for m in args.modes.split(",") if m]
    compile_shapes = parse_shapes(args.compile_shapes)
    shapes = [(b, c) for c in args.contexts for b in args.batches]
    order = []
    for (b, c) in sorted(compile_shapes, key=lambda s: (s[1], s[0])):
        if (b, c) in shapes:
            if "eager" in modes:
                order.append(("eager", b, c))
            if "compile" in modes:
                order.append(("compile", b, c))
    for (b, c) in sorted(shapes, key=lambda s: (s[1] * s[0], s[0])):
        if "eager" in modes and ("eager", b, c) not in order:
            order.append(("eager", b, c))
    return order


def shape_info(batch, ctx, ratios, mem_limit_gib, bw_gb_s):
    ours = rf.step_bytes(batch, ctx, ratios, C, rf.OURS)
    peer = rf.step_bytes(batch, ctx, ratios, C, rf.PEER_BF16)
    need = peer_weight_bytes(ratios) + peer_cache_bytes(batch, ctx, ratios) + peer_workspace_bytes(batch, ctx, ratios)
    fits = need <= mem_limit_gib * GIB
    return {
        "bytes_ours": ours, "bytes_peer": peer,
        "roofline_ms_ours": rf.roofline_ms(ours["total"], bw_gb_s),
        "roofline_ms_peer": rf.roofline_ms(peer["total"], bw_gb_s),
        "plan_gib": {"weights": peer_weight_bytes(ratios) / GIB, "caches": peer_cache_bytes(batch, ctx, ratios) / GIB,
                     "workspace": peer_workspace_bytes(batch, ctx, ratios) / GIB, "total": need / GIB},
        "fits": fits,
    }


def print_plan(args, ratios, bw):
    print("layers %d, compress ratios %s, hash-routed layers %s" % (len(ratios), ratios,
                                                                    list(range(min(N_HASH, len(ratios))))))
    print("peer weights resident: %.2f GiB; memory limit %.0f GiB; bandwidth for the roofline %.0f GB/s"
          % (peer_weight_bytes(ratios) / GIB, args.mem_gib, bw))
    print("%-8s %5s %7s | %8s %8s %8s | %9s %9s %8s | %9s %8s | %s" % (
        "mode", "batch", "context", "weights", "caches", "total", "ours MB", "peer MB", "experts",
        "roof ms", "peer ms", "plan"))
    for mode, b, c in plan(args):
        s = shape_info(b, c, ratios, args.mem_gib, bw)
        g = s["plan_gib"]
        print("%-8s %5d %7d | %7.2fG %7.2fG %7.2fG | %9.1f %9.1f %8.1f | %9.3f %8.3f | %s" % (
            mode, b, c, g["weights"], g["caches"], g["total"], s["bytes_ours"]["total"] / 1e6,
            s["bytes_peer"]["total"] / 1e6, s["bytes_ours"]["distinct_experts_per_layer"],
            s["roofline_ms_ours"], s["roofline_ms_peer"], "run" if s["fits"] else "SKIP (does not fit)"))


# ----------------------------------------------------------------------------------------------------
# the model, as a PyTorch user writes it (needs torch; every function takes tensors)

def rmsnorm(x, w):
    xf = x.float()
    return (w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS))).to(torch.bfloat16)


def dequant_fp8(w, s):
    """e4m3 [o, i] with float32 scales per 128x128 block -> bf16."""
    o, i = w.shape
    wf = w.float().view(o // 128, 128, i // 128, 128) * s[:, None, :, None]
    return wf.view(o, i).to(torch.bfloat16)


def linear_fp8(x, w, s):
    return x @ dequant_fp8(w, s).T


def dequant_fp4(q, s):
    """Packed e2m1 [rows, cols/2] uint8 (element 2i in the low nibble) with ue8m0 bytes per 32 -> bf16."""
    rows = q.shape[0]
    codes = torch.stack(((q & 0x0F).long(), (q >> 4).long()), dim=-1).view(rows, -1)
    w = FP4_TABLE[codes]                                        # [rows, cols] fp32
    scale = torch.exp2(s.float() - 127.0)                       # [rows, cols/32]
    return (w.view(rows, -1, 32) * scale.unsqueeze(-1)).view(rows, -1).to(torch.bfloat16)


def rope_tail(x, cos, sin):
    """Rotate the last 64 channels as 32 interleaved pairs (2i, 2i+1); fp32 math, x's dtype out."""
    t = x[..., -RD:].float().unflatten(-1, (RD // 2, 2))
    a, b = t[..., 0], t[..., 1]
    r = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    return torch.cat((x[..., :-RD], r.to(x.dtype)), dim=-1)


def fp8_roundtrip(x, block):
    """The reference's KV simulation: per-block power-of-two scale, e4m3 round trip."""
    xf = x.float().unflatten(-1, (-1, block))
    amax = xf.abs().amax(-1, keepdim=True).clamp_min(1e-4)
    s = torch.exp2(torch.ceil(torch.log2(amax / 448.0)))
    q = (xf / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).float() * s
    return q.flatten(-2).to(x.dtype)


def fp4_roundtrip(x, block=32):
    """The reference's indexer simulation: per-32 power-of-two scale, nearest e2m1 value."""
    xf = x.float().unflatten(-1, (-1, block))
    amax = xf.abs().amax(-1, keepdim=True).clamp_min(6.0 * 2.0 ** -126)
    s = torch.exp2(torch.ceil(torch.log2(amax / 6.0)))
    v = (xf / s).clamp(-6.0, 6.0)
    q = FP4_GRID[torch.bucketize(v.abs(), FP4_MIDS)] * torch.sign(v) * s
    return q.flatten(-2).to(x.dtype)


def hc_pre(x, fn, scale, base):
    """x [B, 4, D] bf16 -> (sub-layer input [B, D] bf16, post [B, 4], comb [B, 4, 4])."""
    B = x.shape[0]
    xf = x.flatten(1).float()
    mixes = (xf @ fn.T) * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    pre = torch.sigmoid(mixes[:, :HC] * scale[0] + base[:HC]) + HC_EPS
    post = 2 * torch.sigmoid(mixes[:, HC:2 * HC] * scale[1] + base[HC:2 * HC])
    comb = (mixes[:, 2 * HC:] * scale[2] + base[2 * HC:]).view(B, HC, HC)
    comb = torch.softmax(comb, dim=-1) + HC_EPS
    comb = comb / (comb.sum(dim=-2, keepdim=True) + HC_EPS)
    for _ in range(SINKHORN_ITERS - 1):
        comb = comb / (comb.sum(dim=-1, keepdim=True) + HC_EPS)
        comb = comb / (comb.sum(dim=-2, keepdim=True) + HC_EPS)
    y = (pre.unsqueeze(-1) * xf.view(B, HC, D)).sum(1).to(torch.bfloat16)
    return y, post, comb


def hc_post(out, x, post, comb):
    """x_new[j] = post[j] * out + sum_k comb[k][j] * x[k]."""
    new = post.unsqueeze(-1) * out.float().unsqueeze(1) + torch.einsum("bkj,bkd->bjd", comb, x.float())
    return new.to(torch.bfloat16)


def compressor_step(x, cw, state, pos, ratio, width, cos_c, sin_c):
    """One token into the compressor state; returns the entry this token closes (bf16 [B, width], normed and
    rotated at the block's first position) or None."""
    xf = x.float()
    kv = xf @ cw["wkv"].T
    sc = xf @ cw["wgate"].T + cw["ape"][pos % ratio]
    slot = ratio + pos % ratio if ratio == 4 else pos % ratio
    state["kv"][:, slot] = kv
    state["score"][:, slot] = sc
    if (pos + 1) % ratio != 0:
        return None
    if ratio == 4:   # previous block's first half of the channels, this block's second half
        kvs = torch.cat((state["kv"][:, :4, :width], state["kv"][:, 4:, width:]), dim=1)
        scs = torch.cat((state["score"][:, :4, :width], state["score"][:, 4:, width:]), dim=1)
        state["kv"][:, :4] = state["kv"][:, 4:]
        state["score"][:, :4] = state["score"][:, 4:]
    else:
        kvs, scs = state["kv"], state["score"]
    c = (torch.softmax(scs, dim=1) * kvs).sum(1)
    c = rmsnorm(c.to(torch.bfloat16), cw["norm"])
    return rope_tail(c, cos_c, sin_c)


def indexer(x, qr, I, kvc, pos, rope, n):
    B = x.shape[0]
    cos_q, sin_q, cos_c, sin_c = rope
    qi = linear_fp8(qr, *I["wq_b"]).view(B, IH, ID)
    qi = rope_tail(qi, cos_q, sin_q)
    qi = fp4_roundtrip((qi.float() @ HADAMARD).to(torch.bfloat16), 32)
    c = compressor_step(x, I["comp"], kvc["idx_state"], pos, 4, ID, cos_c, sin_c)
    if c is not None:
        kvc["idx_k"][:, pos // 4] = fp4_roundtrip((c.float() @ HADAMARD).to(torch.bfloat16), 32)
    w = (x @ I["weights_proj"].T) * (ID ** -0.5 * IH ** -0.5)          # [B, 64] bf16
    s = torch.einsum("bhd,btd->bht", qi, kvc["idx_k"][:, :n])         # [B, 64, n] bf16
    s = (torch.relu(s) * w.unsqueeze(-1)).sum(1)                      # [B, n]
    return s.topk(min(ITOPK, n), dim=-1).indices


def attention(x, L, kvc, pos, rope):
    B, ratio = x.shape[0], L["ratio"]
    cos_q, sin_q, cos_c, sin_c = rope
    qr = rmsnorm(linear_fp8(x, *L["wq_a"]), L["q_norm"])
    q = linear_fp8(qr, *L["wq_b"]).view(B, H, HD).float()
    q = (q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + EPS)).to(torch.bfloat16)
    q = rope_tail(q, cos_q, sin_q)
    kv = rmsnorm(linear_fp8(x, *L["wkv"]), L["kv_norm"])
    kv = rope_tail(kv, cos_q, sin_q)
    kv = torch.cat((fp8_roundtrip(kv[:, :NOPE], 64), kv[:, NOPE:]), dim=-1)
    kvc["window"][:, pos % W] = kv
    parts = [kvc["window"]]
    if ratio:
        c = compressor_step(x, L["comp"], kvc["comp_state"], pos, ratio, HD, cos_c, sin_c)
        if c is not None:
            kvc["comp"][:, pos // ratio] = torch.cat((fp8_roundtrip(c[:, :NOPE], 64), c[:, NOPE:]), dim=-1)
        n = (pos + 1) // ratio
        if ratio == 4:
            idx = indexer(x, qr, L["idx"], kvc, pos, rope, n)
            parts.append(torch.gather(kvc["comp"][:, :n], 1, idx.unsqueeze(-1).expand(-1, -1, HD)))
        else:
            parts.append(kvc["comp"][:, :n])
    kv_all = torch.cat(parts, dim=1)                                    # [B, N, 512]
    scores = torch.einsum("bhd,bnd->bhn", q, kv_all).float() * HD ** -0.5
    sink = L["sink"].view(1, H, 1).expand(B, H, 1)
    probs = torch.softmax(torch.cat((scores, sink), dim=-1), dim=-1)[..., :-1]
    o = torch.einsum("bhn,bnd->bhd", probs.to(torch.bfloat16), kv_all)
    o = rope_tail(o, cos_q, -sin_q).reshape(B, G, H * HD // G)
    o = torch.einsum("bgd,grd->bgr", o, L["wo_a"].view(G, OL, H * HD // G)).flatten(1)
    return linear_fp8(o, *L["wo_b"])


def expert_forward(xe, we, w13, s13, w2, s2):
    """One routed expert on its tokens: dequantise, SwiGLU with the clamp, routing weight before w2."""
    h = (xe @ dequant_fp4(w13, s13).T).float()                          # [n, 2 * inter]
    h1, h3 = h[:, :INTER], h[:, INTER:]
    a = we.unsqueeze(-1) * F.silu(h1.clamp(max=SWIGLU_LIMIT)) * h3.clamp(-SWIGLU_LIMIT, SWIGLU_LIMIT)
    return (a.to(torch.bfloat16) @ dequant_fp4(w2, s2).T).float()


def routed_experts(x, idx, w, w13, s13, w2, s2, expert_fn):
    """Loop over the experts that received tokens (one host sync for the counts, one per expert)."""
    y = torch.zeros(x.shape[0], D, dtype=torch.float32, device=x.device)
    counts = torch.bincount(idx.flatten(), minlength=E).tolist()
    for e in range(E):
        if counts[e] == 0:
            continue
        tok, slot = torch.where(idx == e)
        y.index_add_(0, tok, expert_fn(x[tok], w[tok, slot], w13[e], s13[e], w2[e], s2[e]))
    return y


def make_routed(expert_fn):
    def routed(x, idx, w, w13, s13, w2, s2):
        return routed_experts(x, idx, w, w13, s13, w2, s2, expert_fn)
    return routed


def moe(x, M, token_ids, routed):
    logits = x.float() @ M["gate"].float().T
    s = torch.sqrt(F.softplus(logits))
    if "tid2eid" in M:
        idx = M["tid2eid"][token_ids]
    else:
        idx = (s + M["bias"]).topk(K, dim=-1).indices
    w = s.gather(1, idx)
    w = w / w.sum(-1, keepdim=True) * ROUTE_SCALE
    y = routed(x, idx, w, M["w13"], M["s13"], M["w2"], M["s2"])
    h1 = linear_fp8(x, *M["sw1"]).float()
    h3 = linear_fp8(x, *M["sw3"]).float()
    a = (F.silu(h1.clamp(max=SWIGLU_LIMIT)) * h3.clamp(-SWIGLU_LIMIT, SWIGLU_LIMIT)).to(torch.bfloat16)
    y = y + linear_fp8(a, *M["sw2"]).float()
    return y.to(torch.bfloat16)


def make_step(routed):
    def step(h, token_ids, layers, caches, ropes, pos):
        for L, kvc in zip(layers, caches):
            y, post, comb = hc_pre(h, *L["hc_attn"])
            a = attention(rmsnorm(y, L["attn_norm"]), L, kvc, pos, ropes[L["ratio"]])
            h = hc_post(a, h, post, comb)
            y, post, comb = hc_pre(h, *L["hc_ffn"])
            f = moe(rmsnorm(y, L["ffn_norm"]), L["moe"], token_ids, routed)
            h = hc_post(f, h, post, comb)
        return h
    return step


# ----------------------------------------------------------------------------------------------------
# weights, caches, rope tables (seeded, generated on the device)

def fp8_weight(out, inp, gen):
    w = torch.randn(out, inp, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    e = -round(math.log2(math.sqrt(inp)))
    s = torch.exp2(torch.randint(e - 1, e + 2, (out // 128, inp // 128), device="cuda", generator=gen).float())
    return w, s


def randn(shape, gen, std=1.0, dtype=None):
    t = torch.randn(shape, device="cuda", generator=gen, dtype=dtype or torch.float32)
    return t.mul_(std) if std != 1.0 else t


def make_layer(i, ratio, gen):
    f32 = torch.float32
    L = {"ratio": ratio,
         "attn_norm": 1 + randn((D,), gen, 0.05), "ffn_norm": 1 + randn((D,), gen, 0.05),
         "hc_attn": (randn((MIX, HC * D), gen, 0.01), randn((3,), gen, 0.1) + 1, randn((MIX,), gen, 0.1)),
         "hc_ffn": (randn((MIX, HC * D), gen, 0.01), randn((3,), gen, 0.1) + 1, randn((MIX,), gen, 0.1)),
         "wq_a": fp8_weight(QL, D, gen), "q_norm": 1 + randn((QL,), gen, 0.05),
         "wq_b": fp8_weight(H * HD, QL, gen),
         "wkv": fp8_weight(HD, D, gen), "kv_norm": 1 + randn((HD,), gen, 0.05),
         "sink": randn((H,), gen),
         "wo_a": randn((G * OL, H * HD // G), gen, (H * HD // G) ** -0.5, torch.bfloat16),
         "wo_b": fp8_weight(D, G * OL, gen)}
    if ratio:
        coff = 2 if ratio == 4 else 1
        L["comp"] = {"wkv": randn((coff * HD, D), gen, D ** -0.5), "wgate": randn((coff * HD, D), gen, D ** -0.5),
                     "ape": randn((ratio, coff * HD), gen, 0.1), "norm": 1 + randn((HD,), gen, 0.05)}
    if ratio == 4:
        L["idx"] = {"wq_b": fp8_weight(IH * ID, QL, gen),
                    "weights_proj": randn((IH, D), gen, D ** -0.5, torch.bfloat16),
                    "comp": {"wkv": randn((2 * ID, D), gen, D ** -0.5), "wgate": randn((2 * ID, D), gen, D ** -0.5),
                             "ape": randn((4, 2 * ID), gen, 0.1), "norm": 1 + randn((ID,), gen, 0.05)}}
    M = {"gate": randn((E, D), gen, D ** -0.5, torch.bfloat16),
         "w13": torch.randint(0, 256, (E, 2 * INTER, D // 2), dtype=torch.uint8, device="cuda", generator=gen),
         "s13": torch.randint(119, 122, (E, 2 * INTER, D // 32), dtype=torch.uint8, device="cuda", generator=gen),
         "w2": torch.randint(0, 256, (E, D, INTER // 2), dtype=torch.uint8, device="cuda", generator=gen),
         "s2": torch.randint(119, 122, (E, D, INTER // 32), dtype=torch.uint8, device="cuda", generator=gen),
         "sw1": fp8_weight(INTER, D, gen), "sw3": fp8_weight(INTER, D, gen), "sw2": fp8_weight(D, INTER, gen)}
    if i < N_HASH:
        M["tid2eid"] = torch.rand((VOCAB, E), device="cuda", generator=gen).argsort(dim=-1)[:, :K].contiguous()
    else:
        M["bias"] = randn((E,), gen, 0.01).to(f32)
    L["moe"] = M
    return L


def make_caches(batch, ctx, ratios, gen):
    bf16, f32 = torch.bfloat16, torch.float32
    caches = []
    for r in ratios:
        c = {"window": randn((batch, W, HD), gen, 1.0, bf16)}
        if r:
            n, coff = ctx // r, (2 if r == 4 else 1)
            c["comp"] = randn((batch, n, HD), gen, 1.0, bf16)
            c["comp_state"] = {"kv": randn((batch, coff * r, coff * HD), gen),
                               "score": randn((batch, coff * r, coff * HD), gen)}
            if r == 4:
                c["idx_k"] = randn((batch, n, ID), gen, 1.0, bf16)
                c["idx_state"] = {"kv": randn((batch, 8, 2 * ID), gen), "score": randn((batch, 8, 2 * ID), gen)}
        caches.append(c)
    return caches


def rope_freqs(base, yarn):
    f = [base ** (-2.0 * i / RD) for i in range(RD // 2)]
    if yarn:
        low = max(math.floor(RD * math.log(YARN_ORIG / (BETA_FAST * 2 * math.pi)) / (2 * math.log(base))), 0)
        high = min(math.ceil(RD * math.log(YARN_ORIG / (BETA_SLOW * 2 * math.pi)) / (2 * math.log(base))), RD - 1)
        for i in range(RD // 2):
            smooth = 1.0 - min(max((i - low) / (high - low), 0.0), 1.0)
            f[i] = f[i] / YARN_FACTOR * (1 - smooth) + f[i] * smooth
    return f


def cos_sin(pos, freqs):
    a = [pos * x for x in freqs]
    return (torch.tensor([math.cos(v) for v in a], device="cuda", dtype=torch.float32),
            torch.tensor([math.sin(v) for v in a], device="cuda", dtype=torch.float32))


def make_ropes(pos, ratios):
    """Per ratio: (cos, sin) at the query position and at the first position of the block it closes."""
    out = {}
    for r in set(ratios):
        fr = rope_freqs(COMPRESS_ROPE_THETA, True) if r else rope_freqs(ROPE_THETA, False)
        cq, sq = cos_sin(pos, fr)
        cc, sc = cos_sin((pos // r) * r, fr) if r else (cq, sq)
        out[r] = (cq, sq, cc, sc)
    return out


def hadamard(n):
    h = torch.ones(1, 1)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return (h * n ** -0.5).to(device="cuda", dtype=torch.float32)


# ----------------------------------------------------------------------------------------------------
# measurement

def time_steps(fn, call_args, steps, warmup):
    for _ in range(warmup):
        fn(*call_args)
    torch.cuda.synchronize()
    ts = []
    for _ in range(steps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn(*call_args)
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1))
    return ts


class Report:
    """The JSON document, rewritten after every row so that a crash keeps what was measured."""

    def __init__(self, path, meta):
        self.path, self.doc = path, {"meta": meta, "rows": []}
        self.flush()

    def add(self, row):
        self.doc["rows"].append(row)
        self.flush()
        if row["status"] == "ok":
            print("%-7s B=%-3d ctx=%-6d step %9.2f ms (%.2f - %.2f)  %9.1f tok/s  roofline(ours) %7.3f ms  x%.1f%s"
                  % (row["mode"], row["batch"], row["context"], row["step_ms"]["median"], row["step_ms"]["min"],
                     row["step_ms"]["max"], row["tok_s"], row["roofline_ms_ours"],
                     row["step_ms"]["median"] / row["roofline_ms_ours"],
                     "  compile %.1f s" % row["compile_s"] if row.get("compile_s") is not None else ""), flush=True)
        else:
            print("%-7s B=%-3d ctx=%-6d %s: %s" % (row["mode"], row["batch"], row["context"], row["status"],
                                                    row.get("reason", "")), flush=True)

    def flush(self):
        if not self.path:
            return
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
        os.replace(tmp, self.path)


def run_shape(mode, batch, ctx, ratios, layers, args, gen, info, bw):
    row = {"mode": mode, "batch": batch, "context": ctx, "position": ctx - 1, "layers": len(ratios),
           "bytes_ours": info["bytes_ours"], "bytes_peer_total": info["bytes_peer"]["total"],
           "bytes_ours_total": info["bytes_ours"]["total"], "copy_gb_s": bw,
           "roofline_ms_ours": rf.roofline_ms(info["bytes_ours"]["total"], bw),
           "roofline_ms_peer": rf.roofline_ms(info["bytes_peer"]["total"], bw), "plan_gib": info["plan_gib"]}
    caches = h = call_args = fn = routed = None
    try:
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        caches = make_caches(batch, ctx, ratios, gen)
        h = randn((batch, HC, D), gen, 1.0, torch.bfloat16)
        token_ids = torch.randint(0, VOCAB, (batch,), device="cuda", generator=gen)
        pos = ctx - 1
        ropes = make_ropes(pos, ratios)
        torch.cuda.synchronize()
        row["fill_s"] = time.perf_counter() - t0
        call_args = (h, token_ids, layers, caches, ropes, pos)
        if mode == "compile":
            torch._dynamo.reset()
            routed = torch.compiler.disable(make_routed(torch.compile(expert_forward, dynamic=True)))
            fn = torch.compile(make_step(routed))
            t0 = time.perf_counter()
            fn(*call_args)
            torch.cuda.synchronize()
            row["compile_s"] = time.perf_counter() - t0
            warmup = 1
        else:
            fn = make_step(make_routed(expert_forward))
            warmup = 2
        ts = time_steps(fn, call_args, args.steps, warmup)
        med = statistics.median(ts)
        row.update(status="ok", step_ms={"median": med, "min": min(ts), "max": max(ts), "all": ts},
                   tok_s=batch / (med / 1e3), peak_gib=torch.cuda.max_memory_allocated() / GIB)
    except Exception as e:  # an OOM or a compile failure keeps the other shapes
        row.update(status="error", reason="%s: %s" % (type(e).__name__, str(e)[:500]))
        traceback.print_exc()
    finally:
        caches = h = call_args = fn = routed = None   # drop every reference to this shape's caches
        gc.collect()
        if mode == "compile":
            torch._dynamo.reset()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--contexts", type=lambda s: [int(x) for x in s.split(",") if x], default=[8192, 32768, 131072])
    ap.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",") if x], default=[1, 8, 64, 256])
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--compile-shapes", default="1x8192,64x8192", help="BxCTX list; compile runs only these")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=240.0, help="shapes not started by then are skipped")
    ap.add_argument("--mem-gib", type=float, default=130.0, help="skip shapes whose plan needs more")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", default=None, help="JSON path (rewritten after every shape)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan (no torch needed) and exit")
    args = ap.parse_args()
    for c in args.contexts:
        if c % 128 or c < 512:
            ap.error("contexts must be multiples of 128 and at least 512: %d" % c)
    for m in args.modes.split(","):
        if m not in ("eager", "compile", ""):
            ap.error("unknown mode " + m)
    ratios = layer_ratios(args.layers)
    if len(ratios) < args.layers:
        ap.error("V4-Flash has %d layers" % len(C["compress_ratios"]))
    if args.dry_run:
        print_plan(args, ratios, ASSUMED_COPY_GB_S)
        return 0

    start = time.perf_counter()
    global torch, F, FP4_TABLE, FP4_GRID, FP4_MIDS, HADAMARD
    import torch as _torch
    import torch.nn.functional as _F
    torch, F = _torch, _F
    for name in ("recompile_limit", "cache_size_limit"):   # layers differ in ratio: several graphs per function
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    FP4_TABLE = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6],
                             dtype=torch.float32, device="cuda")
    FP4_GRID = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6], dtype=torch.float32, device="cuda")
    FP4_MIDS = torch.tensor([.25, .75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=torch.float32, device="cuda")
    HADAMARD = hadamard(ID)
    torch.backends.cuda.matmul.allow_tf32 = False

    free, total = torch.cuda.mem_get_info()
    mem_limit = min(args.mem_gib, total / GIB - 2)
    from bench_kernels import copy_bandwidth  # the kernel benchmarks' measurement (imports torch)
    bw = copy_bandwidth()
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "copy_gb_s": bw, "layers": args.layers, "ratios": ratios, "steps": args.steps,
            "budget_s": args.budget_s, "mem_limit_gib": mem_limit, "seed": args.seed,
            "kv_format": "bf16 caches (main/window 1024 B, indexer 256 B), fp32 compressor state",
            "position": "context - 1 (every compressor closes a block)"}
    print("device %s, torch %s, copy bandwidth %.0f GB/s (read + write)" % (meta["device"], torch.__version__, bw))
    report = Report(args.out, meta)

    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    t0 = time.perf_counter()
    layers = [make_layer(i, r, gen) for i, r in enumerate(ratios)]
    torch.cuda.synchronize()
    meta["weights_gib"] = torch.cuda.memory_allocated() / GIB
    meta["weights_s"] = time.perf_counter() - t0
    print("weights: %.2f GiB in %.1f s" % (meta["weights_gib"], meta["weights_s"]), flush=True)

    for mode, b, c in plan(args):
        info = shape_info(b, c, ratios, mem_limit, bw)
        base = {"mode": mode, "batch": b, "context": c, "bytes_ours_total": info["bytes_ours"]["total"],
                "roofline_ms_ours": rf.roofline_ms(info["bytes_ours"]["total"], bw), "plan_gib": info["plan_gib"]}
        elapsed = time.perf_counter() - start
        if elapsed > args.budget_s:
            report.add(dict(base, status="skipped", reason="time budget: %.0f s of %.0f s used" % (elapsed, args.budget_s)))
            continue
        if not info["fits"]:
            report.add(dict(base, status="skipped", reason="plan needs %.1f GiB > %.1f GiB"
                                                           % (info["plan_gib"]["total"], mem_limit)))
            continue
        report.add(run_shape(mode, b, c, ratios, layers, args, gen, info, bw))
    report.doc["meta"]["total_s"] = time.perf_counter() - start
    report.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
