"""DeepSeek-V4 forward pass in plain eager PyTorch, for full sequences starting at position 0.

Module and parameter names equal the checkpoint's tensor names (embed.weight, layers.N.attn.wq_a.weight, ...),
so ``model.state_dict()`` is the BF16 checkpoint and a checkpoint loads by name.

Two numerics, selected by ``Numerics`` (shared by every module of one model):

* ``exact=True`` (evaluation, under torch.no_grad): every tensor is fp32 holding the values the reference
  implementation / Strata's CPU backend hold, rounded to bf16 exactly where they round (linear outputs, norms,
  HC mixes, RoPE, attention output, MoE output); fp32 accumulation; the KV cache's non-RoPE channels FP8
  round-tripped per 64, the compressed entries likewise, the indexer's keys and queries Hadamard-rotated and
  FP4 round-tripped per 32; with ``act_quant=True`` (a checkpoint whose linears are FP8/FP4) the input of every
  FP8/FP4 linear is FP8-quantized per 128 channels first, as the FP8/FP4 GEMMs do (wo_a excepted: the
  converter dequantizes it). Call ``exact_matmul_precision()`` first so fp32 matmuls do not use TF32.
* ``exact=False`` (training): fp32 master weights, every matmul in bf16 with fp32 results (explicit casts,
  no autocast), no intermediate bf16 rounding, the KV FP8 round trip as a straight-through estimator (the
  forward value is the inference value, the gradient passes unchanged), and the indexer skipped when
  index_topk covers every compressed entry of the sequence (then its selection is "all visible entries" and
  it has no influence on the output). The indexer's weights therefore receive no gradient (see README).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Numerics:
    def __init__(self, exact=False, act_quant=False):
        self.exact = exact
        self.act_quant = act_quant


def exact_matmul_precision():
    """fp32 matmuls in full fp32 (no TF32); only the one long-standing switch, never mixed with others."""
    try:
        torch.set_float32_matmul_precision("highest")
    except Exception as e:  # pragma: no cover - never expected
        print("warning: could not set fp32 matmul precision: %r" % (e,))


def rb(x, nm):
    """Rounds to bf16 (kept as an fp32 tensor) in exact mode; identity in training."""
    return x.to(torch.bfloat16).float() if nm.exact else x


# ----------------------------------------------------------------------------------------------------------
# quantization round trips (same definitions as stio.py, which test_formats.py checks)

def pow2_ceil(v):
    """Smallest power of two >= v for positive normal fp32 v (exponent, +1 if any mantissa bit is set)."""
    b = v.float().contiguous().view(torch.int32)
    e = ((b >> 23) & 0xFF) - 127 + ((b & 0x7FFFFF) != 0).to(torch.int32)
    return ((e + 127) << 23).view(torch.float32)


def fp8_rt(x, block):
    shp = x.shape
    xb = x.float().reshape(*shp[:-1], shp[-1] // block, block)
    amax = xb.abs().amax(-1, keepdim=True).clamp_min(1e-4)
    s = pow2_ceil(amax / 448.0)
    q = (xb / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).float()
    return (q * s).reshape(shp)


def e2m1_round(y):
    a = y.abs()
    r = torch.where(a < 2, torch.round(a * 2) * 0.5,
                    torch.where(a < 4, torch.round(a), torch.clamp(torch.round(a * 0.5) * 2, max=6.0)))
    return torch.copysign(r, y)


def fp4_rt(x, block):
    shp = x.shape
    xb = x.float().reshape(*shp[:-1], shp[-1] // block, block)
    amax = xb.abs().amax(-1, keepdim=True).clamp_min(6.0 * 2.0 ** -126)
    s = pow2_ceil(amax / 6.0)
    return (e2m1_round(xb / s) * s).reshape(shp)


def kv_fp8(x, nm):
    """The KV cache's FP8 simulation of the non-RoPE channels (blocks of 64); straight-through in training."""
    if nm.exact:
        return fp8_rt(x, 64)
    with torch.no_grad():
        q = fp8_rt(x.detach(), 64)
    return x + (q - x).detach()


def hadamard_matrix(n, device):
    h = torch.ones(1, 1, dtype=torch.float32, device=device)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


# ----------------------------------------------------------------------------------------------------------
# RoPE

def rope_freqs(cfg, ratio):
    dim = cfg["qk_rope_head_dim"]
    if ratio == 0:
        base = float(cfg["rope_theta"])
        yarn = None
    else:
        base = float(cfg["compress_rope_theta"])
        yarn = cfg.get("rope_scaling")
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    if yarn:
        orig = yarn["original_max_position_embeddings"]
        factor = float(yarn["factor"])

        def corr(rot):
            return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))

        low = max(math.floor(corr(yarn["beta_fast"])), 0)
        high = min(math.ceil(corr(yarn["beta_slow"])), dim - 1)
        mx = high + 0.001 if high == low else high
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (mx - low)).clamp(0, 1)
        smooth = 1 - ramp
        freqs = freqs / factor * (1 - smooth) + freqs * smooth
    return freqs


def rope_angles(freqs, pos):
    ang = pos.float()[:, None] * freqs[None, :]
    return torch.cos(ang), torch.sin(ang)


def apply_rope(x, cos, sin, nm, inverse=False):
    """Rotates interleaved pairs (x[2i], x[2i+1]) of the last dim; cos/sin broadcast to x[..., ::2]."""
    xf = x.float().unflatten(-1, (-1, 2))
    re, im = xf[..., 0], xf[..., 1]
    s = -sin if inverse else sin
    out = torch.stack([re * cos - im * s, re * s + im * cos], dim=-1).flatten(-2)
    return rb(out, nm)


def rope_tail(x, rd, cos, sin, nm, inverse=False):
    x = x.float()
    return torch.cat([x[..., :-rd], apply_rope(x[..., -rd:], cos, sin, nm, inverse)], -1)


# ----------------------------------------------------------------------------------------------------------
# building blocks

class Lin(nn.Module):
    """A bias-free linear. kind 'q': stored FP8/FP4 in a quantized checkpoint (input FP8-quantized per 128 in
    exact mode with act_quant), bf16 output; 'bf16': bf16 output, never input-quantized; 'f32': fp32 output
    (compressor, router, head)."""

    def __init__(self, out, inn, nm, kind):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out, inn))
        self.nm = nm
        self.kind = kind

    def forward(self, x):
        if self.nm.exact:
            if self.kind == "q" and self.nm.act_quant:
                x = fp8_rt(x, 128)
            y = F.linear(x.float(), self.weight.float())
            return y if self.kind == "f32" else rb(y, self.nm)
        return F.linear(x.to(torch.bfloat16), self.weight.to(torch.bfloat16)).float()


class Table(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, d))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps, nm):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.nm = nm

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + self.eps)
        return rb(self.weight.float() * y, self.nm)


def hc_mixes(xflat, fn, eps):
    """(fn . x) * rsqrt(mean(x^2) + eps) over the flattened hc*dim streams, fp32."""
    inv = torch.rsqrt(xflat.square().mean(-1, keepdim=True) + eps)
    return F.linear(xflat, fn.float()) * inv


def hc_split(mixes, scale, base, hc, iters, eps):
    scale = scale.float()
    base = base.float()
    pre = torch.sigmoid(mixes[..., :hc] * scale[0] + base[:hc]) + eps
    post = 2 * torch.sigmoid(mixes[..., hc:2 * hc] * scale[1] + base[hc:2 * hc])
    comb = (mixes[..., 2 * hc:] * scale[2] + base[2 * hc:]).unflatten(-1, (hc, hc))  # comb[..., j, k]
    comb = torch.softmax(comb, dim=-1) + eps
    comb = comb / (comb.sum(-2, keepdim=True) + eps)
    for _ in range(iters - 1):
        comb = comb / (comb.sum(-1, keepdim=True) + eps)
        comb = comb / (comb.sum(-2, keepdim=True) + eps)
    return pre, post, comb


class Compressor(nn.Module):
    def __init__(self, cfg, ratio, hdim, nm, for_indexer):
        super().__init__()
        d = cfg["hidden_size"]
        self.ratio = ratio
        self.hdim = hdim
        self.coff = 2 if ratio == 4 else 1
        self.rd = cfg["qk_rope_head_dim"]
        self.nm = nm
        self.for_indexer = for_indexer
        self.wkv = Lin(self.coff * hdim, d, nm, "f32")
        self.wgate = Lin(self.coff * hdim, d, nm, "f32")
        self.norm = RMSNorm(hdim, cfg["rms_norm_eps"], nm)
        self.ape = nn.Parameter(torch.zeros(ratio, self.coff * hdim))

    def forward(self, x, freqs, hmat=None):
        """x [B,S,D] -> the S // ratio completed entries [B, nb, hdim] (entry b visible from position r*b+r-1)."""
        b_, s_, _ = x.shape
        r, hd = self.ratio, self.hdim
        nb = s_ // r
        if nb == 0:
            return x.new_zeros(b_, 0, hd, dtype=torch.float32)
        xs = x[:, :nb * r]
        kv = self.wkv(xs).float().view(b_, nb, r, self.coff * hd)
        sc = self.wgate(xs).float().view(b_, nb, r, self.coff * hd) + self.ape.float()
        if self.coff == 2:
            # entry b pools block b-1's first hd channels and block b's last hd channels (8 candidates)
            prev_kv = torch.cat([kv.new_zeros(b_, 1, r, hd), kv[:, :-1, :, :hd]], 1)
            prev_sc = torch.cat([sc.new_full((b_, 1, r, hd), float("-inf")), sc[:, :-1, :, :hd]], 1)
            kv = torch.cat([prev_kv, kv[..., hd:]], 2)
            sc = torch.cat([prev_sc, sc[..., hd:]], 2)
        w = torch.softmax(sc, dim=2)
        c = (w * kv).sum(2)
        c = self.norm(rb(c, self.nm))
        pos = torch.arange(nb, device=x.device) * r
        cos, sin = rope_angles(freqs, pos)
        c = rope_tail(c, self.rd, cos, sin, self.nm)
        if self.for_indexer:
            c = rb((c @ hmat) * (hd ** -0.5), self.nm)
            if self.nm.exact:
                c = fp4_rt(c, 32)
        else:
            c = torch.cat([kv_fp8(c[..., :-self.rd], self.nm), c[..., -self.rd:]], -1)
        return c


class Indexer(nn.Module):
    def __init__(self, cfg, nm):
        super().__init__()
        self.heads = cfg["index_n_heads"]
        self.hdim = cfg["index_head_dim"]
        self.topk = cfg["index_topk"]
        self.rd = cfg["qk_rope_head_dim"]
        self.nm = nm
        self.wq_b = Lin(self.heads * self.hdim, cfg["q_lora_rank"], nm, "q")
        self.weights_proj = Lin(self.heads, cfg["hidden_size"], nm, "bf16")
        self.compressor = Compressor(cfg, 4, self.hdim, nm, for_indexer=True)

    def forward(self, x, qr, cos, sin, freqs):
        """-> bool [B, S, nc]: the compressed entries each query attends (top-k among the visible ones)."""
        b_, s_, _ = x.shape
        hmat = hadamard_matrix(self.hdim, x.device)
        keys = self.compressor(x, freqs, hmat)
        nc = keys.shape[1]
        q = self.wq_b(qr).float().view(b_, s_, self.heads, self.hdim)
        q = rope_tail(q, self.rd, cos[:, None], sin[:, None], self.nm)
        q = rb((q @ hmat) * (self.hdim ** -0.5), self.nm)
        if self.nm.exact:
            q = fp4_rt(q.reshape(b_, s_, self.heads * self.hdim), 32).view(b_, s_, self.heads, self.hdim)
        w = rb(self.weights_proj(x).float() * (self.hdim ** -0.5 * self.heads ** -0.5), self.nm)
        dots = rb(torch.einsum("bshd,btd->bsht", q, keys), self.nm)
        score = rb(rb(torch.relu(dots) * w.unsqueeze(-1), self.nm).sum(2), self.nm)  # [B,S,nc]
        vis = torch.arange(nc, device=x.device)[None, :] < ((torch.arange(s_, device=x.device) + 1) // 4)[:, None]
        score = score.masked_fill(~vis, float("-inf"))
        k = min(self.topk, nc)
        idx = score.topk(k, dim=-1).indices
        sel = torch.zeros(b_, s_, nc, dtype=torch.bool, device=x.device)
        sel.scatter_(-1, idx, True)
        return sel & vis


class Attention(nn.Module):
    def __init__(self, cfg, layer_id, nm):
        super().__init__()
        d = cfg["hidden_size"]
        self.nm = nm
        self.h = cfg["num_attention_heads"]
        self.hd = cfg["head_dim"]
        self.rd = cfg["qk_rope_head_dim"]
        self.g = cfg["o_groups"]
        self.ol = cfg["o_lora_rank"]
        self.window = cfg["sliding_window"]
        self.eps = cfg["rms_norm_eps"]
        self.ratio = cfg["compress_ratios"][layer_id]
        ql = cfg["q_lora_rank"]
        self.wq_a = Lin(ql, d, nm, "q")
        self.q_norm = RMSNorm(ql, self.eps, nm)
        self.wq_b = Lin(self.h * self.hd, ql, nm, "q")
        self.wkv = Lin(self.hd, d, nm, "q")
        self.kv_norm = RMSNorm(self.hd, self.eps, nm)
        self.wo_a = Lin(self.g * self.ol, self.h * self.hd // self.g, nm, "bf16")
        self.wo_b = Lin(d, self.g * self.ol, nm, "q")
        self.attn_sink = nn.Parameter(torch.zeros(self.h))
        self.compressor = Compressor(cfg, self.ratio, self.hd, nm, for_indexer=False) if self.ratio else None
        self.indexer = Indexer(cfg, nm) if self.ratio == 4 else None
        self.register_buffer("freqs", rope_freqs(cfg, self.ratio), persistent=False)

    def head_norm(self, q):
        if self.nm.exact:  # the reference runs this in bf16 arithmetic, rounding every step
            sq = rb(q * q, self.nm)
            mean = rb(sq.sum(-1, keepdim=True) / q.shape[-1], self.nm)
            r = rb(torch.rsqrt(rb(mean + self.eps, self.nm)), self.nm)
            return rb(q * r, self.nm)
        return q * torch.rsqrt(q.square().mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        b_, s_, _ = x.shape
        dev = x.device
        nm = self.nm
        pos = torch.arange(s_, device=dev)
        cos, sin = rope_angles(self.freqs, pos)  # [S, rd/2]
        qr = self.q_norm(self.wq_a(x))
        q = self.wq_b(qr).float().view(b_, s_, self.h, self.hd)
        q = self.head_norm(q)
        q = rope_tail(q, self.rd, cos[:, None], sin[:, None], nm)
        kv = self.kv_norm(self.wkv(x))
        kv = rope_tail(kv, self.rd, cos, sin, nm)
        kv = torch.cat([kv_fp8(kv[..., :-self.rd], nm), kv[..., -self.rd:]], -1)  # [B,S,hd]

        i = pos[:, None]
        j = pos[None, :]
        mask = ((j <= i) & (j > i - self.window)).unsqueeze(0)  # [1,S,S]
        keys = kv
        if self.compressor is not None:
            comp = self.compressor(x, self.freqs)  # [B,nc,hd]
            nc = comp.shape[1]
            if nc > 0:
                vis = (torch.arange(nc, device=dev)[None, :] < ((pos + 1) // self.ratio)[:, None]).unsqueeze(0)
                if self.indexer is not None and (nm.exact or self.indexer.topk < nc):
                    vis = vis & self.indexer(x, qr, cos, sin, self.freqs)
                keys = torch.cat([kv, comp], 1)
                mask = torch.cat([mask.expand(vis.shape[0], s_, s_), vis], -1)
        o = self.attend(q, keys, mask)  # [B,S,H,hd]
        o = rope_tail(o, self.rd, cos[:, None], sin[:, None], nm, inverse=True)
        o = o.reshape(b_, s_, self.g, self.h * self.hd // self.g)
        wa = self.wo_a.weight.view(self.g, self.ol, -1)
        if nm.exact:
            oa = rb(torch.einsum("bsgi,goi->bsgo", o, wa.float()), nm)
        else:
            oa = torch.einsum("bsgi,goi->bsgo", o.to(torch.bfloat16), wa.to(torch.bfloat16)).float()
        return self.wo_b(oa.flatten(2))

    def attend(self, q, kv, mask):
        """Softmax over the allowed rows plus a per-head sink logit with no value; K = V."""
        nm = self.nm
        scale = 1.0 / math.sqrt(self.hd)
        qh = q.transpose(1, 2)  # [B,H,S,hd]
        kt = kv.transpose(1, 2).unsqueeze(1)  # [B,1,hd,T]
        m4 = mask.unsqueeze(1)  # [B|1,1,S,T]
        sink = self.attn_sink.float().view(1, -1, 1, 1)
        if nm.exact:
            z = torch.matmul(qh, kt) * scale
            z = z.masked_fill(~m4, float("-inf"))
            mx = z.amax(-1, keepdim=True)  # finite: every query sees itself
            p = torch.exp(z - mx)
            denom = p.sum(-1, keepdim=True) + torch.exp(sink - mx)
            o = torch.matmul(rb(p, nm), kv.unsqueeze(1))
            o = rb(o / denom, nm)
        else:
            z = torch.matmul(qh.to(torch.bfloat16), kt.to(torch.bfloat16)).float() * scale
            z = z.masked_fill(~m4, float("-inf"))
            zs = torch.cat([z, sink.expand(z.shape[0], -1, z.shape[2], 1)], -1)
            p = torch.softmax(zs, dim=-1)[..., :-1]
            o = torch.matmul(p.to(torch.bfloat16), kv.unsqueeze(1).to(torch.bfloat16)).float()
        return o.transpose(1, 2)


class Expert(nn.Module):
    def __init__(self, d, inter, limit, nm):
        super().__init__()
        self.nm = nm
        self.limit = limit
        self.w1 = Lin(inter, d, nm, "q")
        self.w2 = Lin(d, inter, nm, "q")
        self.w3 = Lin(inter, d, nm, "q")

    def forward(self, x, weight=None):
        g = self.w1(x).float()
        u = self.w3(x).float()
        if self.limit > 0:
            u = torch.clamp(u, -self.limit, self.limit)
            g = torch.clamp(g, max=self.limit)
        h = F.silu(g) * u
        if weight is not None:
            h = weight * h
        return self.w2(rb(h, self.nm)).float()


class Gate(nn.Module):
    def __init__(self, cfg, layer_id, nm):
        super().__init__()
        self.nm = nm
        self.k = cfg["num_experts_per_tok"]
        self.scale = float(cfg["routed_scaling_factor"])
        e = cfg["n_routed_experts"]
        self.weight = nn.Parameter(torch.empty(e, cfg["hidden_size"]))
        self.hash = layer_id < cfg["num_hash_layers"]
        if self.hash:
            self.register_buffer("tid2eid", torch.zeros(cfg["vocab_size"], self.k, dtype=torch.int64))
        else:
            self.register_buffer("bias", torch.zeros(e))

    def forward(self, x, tokens):
        logits = F.linear(x.float(), self.weight.float())  # fp32 router in both modes
        s = torch.sqrt(F.softplus(logits))
        if self.hash:
            idx = self.tid2eid[tokens]
        else:
            idx = (s + self.bias.float()).topk(self.k, dim=-1).indices
        w = s.gather(-1, idx)
        w = w / w.sum(-1, keepdim=True) * self.scale
        return w, idx


class MoE(nn.Module):
    def __init__(self, cfg, layer_id, nm):
        super().__init__()
        d = cfg["hidden_size"]
        self.nm = nm
        self.n = cfg["n_routed_experts"]
        inter = cfg["moe_intermediate_size"]
        limit = float(cfg.get("swiglu_limit", 0.0))
        self.gate = Gate(cfg, layer_id, nm)
        self.experts = nn.ModuleList([Expert(d, inter, limit, nm) for _ in range(self.n)])
        self.shared_experts = Expert(d, inter, limit, nm)
        self.last_load = None

    def forward(self, x, tokens):
        shp = x.shape
        x = x.reshape(-1, shp[-1])
        tokens = tokens.reshape(-1)
        w, idx = self.gate(x, tokens)
        y = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
        for e in range(self.n):
            rows, slot = torch.where(idx == e)
            if rows.numel() == 0:
                continue
            ye = self.experts[e](x[rows], w[rows, slot].unsqueeze(-1))
            y = y.index_add(0, rows, ye)
        if not self.nm.exact:
            with torch.no_grad():
                self.last_load = torch.bincount(idx.reshape(-1), minlength=self.n).float()
        y = y + self.shared_experts(x)
        return rb(y, self.nm).view(shp)


class Block(nn.Module):
    def __init__(self, cfg, layer_id, nm):
        super().__init__()
        d = cfg["hidden_size"]
        self.nm = nm
        self.hc = cfg["hc_mult"]
        self.iters = cfg["hc_sinkhorn_iters"]
        self.hc_eps = cfg["hc_eps"]
        self.eps = cfg["rms_norm_eps"]
        mix = (2 + self.hc) * self.hc
        self.attn_norm = RMSNorm(d, self.eps, nm)
        self.ffn_norm = RMSNorm(d, self.eps, nm)
        self.hc_attn_fn = nn.Parameter(torch.empty(mix, self.hc * d))
        self.hc_attn_base = nn.Parameter(torch.zeros(mix))
        self.hc_attn_scale = nn.Parameter(torch.ones(3))
        self.hc_ffn_fn = nn.Parameter(torch.empty(mix, self.hc * d))
        self.hc_ffn_base = nn.Parameter(torch.zeros(mix))
        self.hc_ffn_scale = nn.Parameter(torch.ones(3))
        self.attn = Attention(cfg, layer_id, nm)
        self.ffn = MoE(cfg, layer_id, nm)

    def sub(self, h, fn, scale, base, norm, f):
        mixes = hc_mixes(h.flatten(2).float(), fn, self.eps)
        pre, post, comb = hc_split(mixes, scale, base, self.hc, self.iters, self.hc_eps)
        x = rb((pre.unsqueeze(-1) * h).sum(2), self.nm)
        y = f(norm(x)).float()  # [B,S,D]
        mixed = torch.matmul(comb.transpose(-1, -2), h)  # new stream k = sum_j comb[j][k] * h[j]
        return rb(post.unsqueeze(-1) * y.unsqueeze(-2) + mixed, self.nm)

    def forward(self, h, tokens):
        h = self.sub(h, self.hc_attn_fn, self.hc_attn_scale, self.hc_attn_base, self.attn_norm, self.attn)
        h = self.sub(h, self.hc_ffn_fn, self.hc_ffn_scale, self.hc_ffn_base, self.ffn_norm,
                     lambda x: self.ffn(x, tokens))
        return h


class V4Model(nn.Module):
    def __init__(self, cfg, exact=False, act_quant=False):
        super().__init__()
        self.cfg = cfg
        self.nm = Numerics(exact, act_quant)
        d = cfg["hidden_size"]
        self.hc = cfg["hc_mult"]
        self.eps = cfg["rms_norm_eps"]
        self.hc_eps = cfg["hc_eps"]
        self.embed = Table(cfg["vocab_size"], d)
        self.layers = nn.ModuleList([Block(cfg, i, self.nm) for i in range(cfg["num_hidden_layers"])])
        self.norm = RMSNorm(d, self.eps, self.nm)
        self.head = Lin(cfg["vocab_size"], d, self.nm, "f32")
        self.hc_head_fn = nn.Parameter(torch.empty(self.hc, self.hc * d))
        self.hc_head_base = nn.Parameter(torch.zeros(self.hc))
        self.hc_head_scale = nn.Parameter(torch.ones(1))

    def set_numerics(self, exact, act_quant=False):
        self.nm.exact = exact
        self.nm.act_quant = act_quant

    def embed_streams(self, tokens):
        h = self.embed.weight[tokens].float()  # [B,S,D]
        return h.unsqueeze(2).repeat(1, 1, self.hc, 1)

    def head_logits(self, h):
        mixes = hc_mixes(h.flatten(2).float(), self.hc_head_fn, self.eps)
        pre = torch.sigmoid(mixes * self.hc_head_scale.float() + self.hc_head_base.float()) + self.hc_eps
        y = rb((pre.unsqueeze(-1) * h).sum(2), self.nm)
        return self.head(self.norm(y)).float()

    def forward(self, tokens, return_hidden=False):
        """tokens [B,S] int64 -> logits [B,S,V] fp32 (and each block's output streams [B,S,hc,D])."""
        h = self.embed_streams(tokens)
        hidden = []
        for layer in self.layers:
            h = layer(h, tokens)
            if return_hidden:
                hidden.append(h)
        logits = self.head_logits(h)
        return (logits, hidden) if return_hidden else logits


# ----------------------------------------------------------------------------------------------------------
# initialisation and loading

def init_weights(model, seed):
    cfg = model.cfg
    g = torch.Generator(device="cpu").manual_seed(seed)
    n_layers = cfg["num_hidden_layers"]
    std = 0.02
    out_std = std / math.sqrt(2 * n_layers)
    hc = cfg["hc_mult"]
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            elif name.endswith("_fn"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.01)
            elif name.endswith("_scale"):
                p.fill_(1.0)
            elif name.endswith("_base"):
                p.zero_()
                if p.numel() == (2 + hc) * hc:  # comb part: favour each stream keeping its own residual
                    p[2 * hc:].view(hc, hc).diagonal().fill_(2.0)
            elif name.endswith("attn_sink") or name.endswith(".ape"):
                p.zero_()
            elif name.endswith("wo_b.weight") or name.endswith(".w2.weight"):
                p.copy_(torch.randn(p.shape, generator=g) * out_std)
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=g) * std)
            else:
                raise ValueError("no init rule for " + name)
        e = cfg["n_routed_experts"]
        k = cfg["num_experts_per_tok"]
        for layer in model.layers:
            gate = layer.ffn.gate
            if gate.hash:
                perm = torch.argsort(torch.rand(cfg["vocab_size"], e, generator=g), dim=-1)[:, :k]
                gate.tid2eid.copy_(perm.to(torch.int64))
            else:
                gate.bias.zero_()


def load_arrays(model, arrays, strict_extra=False):
    """Copies {name: numpy array} (float32 / int64, as stio.dequantized_checkpoint gives) into the model by name.
    Checkpoint tensors the model does not have (the MTP block) are ignored unless strict_extra."""
    sd = model.state_dict()
    missing = [k for k in sd if k not in arrays]
    if missing:
        raise KeyError("checkpoint lacks %d tensors, e.g. %s" % (len(missing), missing[:5]))
    extra = [k for k in arrays if k not in sd]
    if extra and strict_extra:
        raise KeyError("checkpoint has tensors the model does not: %s" % extra[:5])
    with torch.no_grad():
        for k, t in sd.items():
            a = torch.from_numpy(arrays[k].copy())
            if tuple(a.shape) != tuple(t.shape):
                raise ValueError("%s: checkpoint shape %s, model %s" % (k, tuple(a.shape), tuple(t.shape)))
            t.copy_(a.to(t.dtype))
    return extra
