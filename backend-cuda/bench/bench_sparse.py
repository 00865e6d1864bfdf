#!/usr/bin/env python3
"""Checks and benchmark of the lightning indexer, exact top-k and sparse FP8 attention (libstrata_cuda.so).

Checks (before any timing, on the same GPU):
  top-k      the selected set equals a stable sort's first k (higher score first, lower index among ties),
             on scores with heavy ties, 2K / 32K / 256K candidates
  indexer    scores bit-identical to an exact emulation (float64 dots, bf16 steps, heads summed in order)
  attention  relative error against an fp32 PyTorch reference over the same dequantised entries

Benchmarks (CUDA-graph replays, median of 5; inputs rotate so repeated calls do not run from L2):
  indexer + top-k per token-layer at 8K / 128K / 1M context, batch 1 and 64
  sparse attention at batch 1..256, 64 heads (window 128 + top-k 512) and 128 heads (128 + 1024):
  effective TFLOPS (4 * heads * 512 * entries) and GB/s against the bf16 matmul rate and the copy
  bandwidth measured in this run, and the same computation in PyTorch (eager and torch.compile).

usage: python3 bench_sparse.py --lib libstrata_cuda.so [--out DIR] [--quick]
"""
import argparse
import ctypes
import json
import os
import sys
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_kernels import (I32, I64, F32, check, compiled_fn, copy_bandwidth, dev, p, rope_table,  # noqa: E402
                           stream, time_graph, time_plain, yarn_freqs)

D, NOPE = 512, 448
IDX_HEADS, IDX_DIM = 64, 128
MAIN_EPP, MAIN_PAGE = 64, 64 * 584          # C4A main page: [64 x 576 data | 64 x 8 scales]
IDX_EPP, IDX_PAGE = 64, 64 * 68             # indexer page: [64 x 64 nibbles | 64 x 4 scales]


def load(path):
    lib = ctypes.CDLL(path)
    lib.strata_cuda_error_string.restype = ctypes.c_char_p
    lib.strata_cuda_error_string.argtypes = [I32]
    lib.strata_indexer_q_prep.argtypes = [I64, I64, I64, I64, I64, I64, I32, I32, F32, I64]
    lib.strata_indexer_scores.argtypes = [I64, I64, I64, I32, I64, I64, I64, I32, I64, I64, I32, I32, I32, I32,
                                          I64, I64, I32, I32, I64]
    lib.strata_indexer_topk.argtypes = [I64, I64, I64, I32, I64, I64, I64, I32, I32, I64, I64, I32, I32, I32, I32, I64]
    lib.strata_sparse_attn.argtypes = [I64, I32, I64, I64, I64, I64, F32, ctypes.POINTER(I64), I32, I64, I32, I64, I64]
    lib.strata_sparse_attn_workspace_bytes.restype = I64
    lib.strata_sparse_attn_workspace_bytes.argtypes = [I32, I32, I64]
    lib.strata_sparse_attn_smem_bytes.restype = I64
    return lib


# ----------------------------------------------------------------------------------------------------
# inputs

def random_fp8_pool(pages, gen):
    """Paged FP8 entries: e4m3 data (no NaN codes), ue8m0 scales 2^-9..2^-4, bf16 RoPE values."""
    pool = torch.empty(pages * MAIN_PAGE, dtype=torch.uint8, device=dev)
    data = pool.as_strided((pages, MAIN_EPP, 576), (MAIN_PAGE, 576, 1))
    scl = pool.as_strided((pages, MAIN_EPP, 8), (MAIN_PAGE, 8, 1), MAIN_EPP * 576)
    codes = torch.randint(0, 256, (pages, MAIN_EPP, NOPE), dtype=torch.uint8, device=dev, generator=gen)
    codes[(codes & 0x7f) == 0x7f] = 0
    data[..., :NOPE] = codes
    rope = (torch.randn(pages, MAIN_EPP, 64, device=dev, generator=gen) * 0.5).to(torch.bfloat16)
    data[..., NOPE:] = rope.view(torch.uint8)
    scl[..., :7] = torch.randint(118, 124, (pages, MAIN_EPP, 7), dtype=torch.uint8, device=dev, generator=gen)
    scl[..., 7] = 0
    return pool


def dequant_rows(pool, slots):
    """The 512-wide bf16 rows of the given slots (as the kernel sees them), for the references."""
    pages = pool.numel() // MAIN_PAGE
    data = pool.as_strided((pages, MAIN_EPP, 576), (MAIN_PAGE, 576, 1))
    scl = pool.as_strided((pages, MAIN_EPP, 8), (MAIN_PAGE, 8, 1), MAIN_EPP * 576)
    pg, e = slots // MAIN_EPP, slots % MAIN_EPP
    raw = data[pg, e]
    s = torch.exp2(scl[pg, e][..., :7].float() - 127)
    nope = raw[..., :NOPE].contiguous().view(torch.float8_e4m3fn).float() * s.repeat_interleave(64, -1)
    rope = raw[..., NOPE:].contiguous().view(torch.bfloat16).float()
    return torch.cat((nope, rope), -1).to(torch.bfloat16)


def torch_attention(q, lists, pool, sink, scale):
    """What a PyTorch user writes: gather + dequantise, logits with a sink column, softmax, P V (bf16)."""
    slots = (lists & 0x3fffffff).long()
    kv = dequant_rows(pool, slots)                                # [B, L, 512] bf16
    s = torch.einsum("bhd,bld->bhl", q.float(), kv.float()) * scale
    s = torch.cat((s, sink.view(1, -1, 1).expand(s.shape[0], -1, 1)), -1)
    pr = torch.softmax(s, -1)[..., :-1]
    return torch.einsum("bhl,bld->bhd", pr.to(torch.bfloat16).float(), kv.float()).to(torch.bfloat16)


def matmul_tflops():
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    ts = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        a @ b
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3)
    ts.sort()
    return 2 * 8192 ** 3 / ts[len(ts) // 2] / 1e12


# ----------------------------------------------------------------------------------------------------
# calls

def attn_workspace(lib, q, lists):
    n = lib.strata_sparse_attn_workspace_bytes(q.shape[0], q.shape[1], lists.shape[1])
    return torch.empty(max(n, 1), dtype=torch.uint8, device=dev) if n else None


def run_attention(lib, q, lists, lens, sink, pools, out, ws="auto"):
    if isinstance(ws, str):
        ws = attn_workspace(lib, q, lists)
    src = (I64 * (6 * len(pools)))()
    for i, pool in enumerate(pools):
        src[6 * i:6 * i + 6] = [p(pool), MAIN_PAGE, MAIN_EPP, 576, MAIN_EPP * 576, 8]
    check(lib, lib.strata_sparse_attn(p(q), q.shape[1], p(lists), p(lens), lists.shape[1], p(sink),
                                      D ** -0.5, src, len(pools), p(out), q.shape[0],
                                      p(ws) if ws is not None else 0, stream()), "sparse_attn")


class Indexer:
    """One indexer launch set: q prep, scores, top-k, for B decode queries over `cand` candidates each."""

    def __init__(self, lib, B, cand, k, gen, heads=IDX_HEADS, key_scales="narrow"):
        """key_scales: "narrow": a key's four block scales within a factor of 2 (2^-7 .. 2^0), as the FP4 blocks
        of one rotated row come out: the scores kernel's one-chain form; "wide": each block scale drawn from
        2^-7 .. 2^0 on its own (a key's spread up to 2^7): its four-term form; "mixed": narrow, and every 97th key
        one block 64 times larger: both forms in one launch."""
        self.lib, self.B, self.cand, self.k, self.heads = lib, B, cand, k, heads
        pages_per_seq = (cand + IDX_EPP - 1) // IDX_EPP
        pages = B * pages_per_seq
        self.pool = torch.randint(0, 256, (pages * IDX_PAGE,), dtype=torch.uint8, device=dev, generator=gen)
        scl = self.pool.as_strided((pages, IDX_EPP, 4), (IDX_PAGE, 4, 1), IDX_EPP * 64)
        if key_scales == "wide":
            scl.copy_(torch.randint(120, 128, (pages, IDX_EPP, 4), dtype=torch.uint8, device=dev, generator=gen))
        else:
            base = torch.randint(120, 127, (pages, IDX_EPP, 1), dtype=torch.uint8, device=dev, generator=gen)
            scl.copy_(base + torch.randint(0, 2, (pages, IDX_EPP, 4), dtype=torch.uint8, device=dev, generator=gen))
            if key_scales == "mixed":
                flat = scl.reshape(-1, 4)
                flat[5::97, 1] += 6
        self.table = torch.randperm(pages, device=dev, generator=gen).int().view(B, pages_per_seq).contiguous()
        self.pos = torch.full((B,), cand * 4 - 1, dtype=torch.int32, device=dev)
        self.seq = torch.arange(B, dtype=torch.int32, device=dev)
        self.q = (torch.randn(B, heads, IDX_DIM, device=dev, generator=gen)).to(torch.bfloat16)
        self.w = (torch.randn(B, heads, device=dev, generator=gen)).to(torch.bfloat16)
        self.cs = rope_table(self.pos, yarn_freqs())
        self.q_codes = torch.empty(B, heads, IDX_DIM, dtype=torch.int8, device=dev)
        self.q_scales = torch.empty(B, heads, 4, device=dev)
        self.w_out = torch.empty(B, heads, device=dev)
        self.scores = torch.empty(B, cand, dtype=torch.int16, device=dev)
        self.idx = torch.empty(B, k, dtype=torch.int32, device=dev)
        self.list = torch.empty(B, 128 + k, dtype=torch.int32, device=dev)

    def prep(self):
        check(self.lib, self.lib.strata_indexer_q_prep(p(self.q), p(self.w), p(self.cs), p(self.q_codes),
                                                       p(self.q_scales), p(self.w_out), self.B, self.heads,
                                                       IDX_DIM ** -0.5 * self.heads ** -0.5, stream()), "q_prep")

    def score(self):
        check(self.lib, self.lib.strata_indexer_scores(p(self.q_codes), p(self.q_scales), p(self.w_out), self.heads,
                                                       p(self.pos), p(self.seq), p(self.table), self.table.shape[1],
                                                       p(self.pool), IDX_PAGE, IDX_EPP, 64, IDX_EPP * 64, 4,
                                                       p(self.scores), self.cand, self.B, self.cand, stream()),
              "scores")

    def topk(self):
        check(self.lib, self.lib.strata_indexer_topk(p(self.scores), self.cand, p(self.pos), self.k, p(self.idx),
                                                     p(self.seq), p(self.table), self.table.shape[1], IDX_EPP,
                                                     p(self.list), self.list.shape[1], 128, 1, self.B, self.cand,
                                                     stream()),
              "topk")

    def all(self):
        self.prep()
        self.score()
        self.topk()

    # exact emulation of the scores from the prepared queries (float64 dots are exact here)
    def reference_scores(self, rows=4):
        data = self.pool.as_strided((self.pool.numel() // IDX_PAGE, IDX_EPP, 64), (IDX_PAGE, 64, 1))
        scl = self.pool.as_strided((self.pool.numel() // IDX_PAGE, IDX_EPP, 4), (IDX_PAGE, 4, 1), IDX_EPP * 64)
        mag = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6], device=dev, dtype=torch.float64)
        out = []
        for b in range(min(rows, self.B)):
            j = torch.arange(self.cand, device=dev)
            pg = self.table[b, j // IDX_EPP].long()
            e = j % IDX_EPP
            nib = data[pg, e]
            codes = torch.stack((nib & 15, nib >> 4), -1).flatten(-2).long()
            val = mag[codes & 7] * torch.where(codes >= 8, -1.0, 1.0)
            val = val * torch.exp2(scl[pg, e].double() - 127).repeat_interleave(32, -1)
            qv = self.q_codes[b].double() * 0.5 * self.q_scales[b].double().repeat_interleave(32, -1)
            d = (qv @ val.T).float()                                   # [heads, cand]
            d = d.to(torch.bfloat16).float()
            s = torch.zeros(self.cand, device=dev)
            for h in range(self.heads):
                t = (d[h] * self.w_out[b, h]).to(torch.bfloat16).float()
                s = s + torch.where(d[h] > 0, t, torch.zeros_like(t))
            out.append(s.to(torch.bfloat16))
        return torch.stack(out)


def topk_reference(scores_bf16, n, k):
    order = torch.sort(scores_bf16[:n].float(), descending=True, stable=True).indices
    return set(order[:k].tolist())


# ----------------------------------------------------------------------------------------------------

def checks(lib, gen, notes):
    ok = True
    # top-k on heavily tied scores: few distinct values
    for cand in (2048, 32768, 262144):
        ix = Indexer(lib, 2, cand, 512, gen)
        vals = torch.randint(0, 40, (2, cand), device=dev, generator=gen).float() * 0.125 - 1.0
        ix.scores.copy_(vals.to(torch.bfloat16).view(torch.int16))
        ix.topk()
        torch.cuda.synchronize()
        for b in range(2):
            got = set(ix.idx[b].tolist())
            want = topk_reference(ix.scores[b].view(torch.bfloat16), cand, 512)
            same = got == want
            ok &= same
            notes.append(f"topk ties cand={cand} row={b}: {'identical' if same else 'DIFFERENT'} "
                         f"({len(got & want)}/512)")
            lst = ix.list[b, 128:128 + 512]
            slots = set((lst & 0x3fffffff).tolist())
            tags = set((lst >> 30).tolist())
            want_slots = {int(ix.table[b, j // IDX_EPP]) * IDX_EPP + j % IDX_EPP for j in want}
            ok &= slots == want_slots and tags == {1}
    # indexer scores exact, keys of every spread of block scales (both forms of the scores kernel)
    for cand, spread in ((2048, "narrow"), (32768, "narrow"), (32768, "wide"), (32768, "mixed")):
        ix = Indexer(lib, 3, cand, 512, gen, key_scales=spread)
        ix.all()
        torch.cuda.synchronize()
        ref = ix.reference_scores(3)
        got = ix.scores.view(torch.bfloat16)
        diff = (got.float() != ref.float()).sum().item()
        ok &= diff == 0
        notes.append(f"indexer scores cand={cand} {spread} key scales: {diff} of {ref.numel()} differ from the "
                     "exact emulation")
        for b in range(3):
            same = set(ix.idx[b].tolist()) == topk_reference(ref[b], cand, 512)
            ok &= same
            notes.append(f"indexer top-k cand={cand} {spread} row={b}: {'identical' if same else 'DIFFERENT'}")
    # indexer scores exact with rows of different lengths: last pages partly visible, one row a page shorter
    cand = 20017
    ix = Indexer(lib, 5, cand, 512, gen, key_scales="mixed")
    visible = [cand, cand - 1, cand - 33, cand - 64 - 17, 4096]
    ix.pos.copy_(torch.tensor([4 * v - 1 for v in visible], dtype=torch.int32, device=dev))
    ix.scores.fill_(-1)
    ix.prep()
    ix.score()
    torch.cuda.synchronize()
    ref = ix.reference_scores(5)
    got = ix.scores.view(torch.bfloat16)
    diff = sum((got[b, :v].float() != ref[b, :v].float()).sum().item() for b, v in enumerate(visible))
    past = sum((ix.scores[b, v:] != -1).sum().item() for b, v in enumerate(visible))
    ok &= diff == 0 and past == 0
    notes.append(f"indexer scores rows of {visible} candidates: {diff} of {sum(visible)} differ from the exact "
                 f"emulation, {past} written past a row's candidates")
    # attention
    for heads, L in ((64, 640), (128, 1152), (8, 200)):
        B = 5
        pool = random_fp8_pool(64, gen)
        slots = torch.randint(0, 64 * MAIN_EPP, (B, L), device=dev, generator=gen).int()
        lens = torch.tensor([L, L - 1, 129, 64, 1][:B], dtype=torch.int32, device=dev)
        lists = slots.clone()
        tagged = lists | (1 << 30)
        lists[:, 128:] = tagged[:, 128:]                   # window from source 0, the rest from source 1
        lists[0, 5] = -1                                   # a skipped entry
        q = (torch.randn(B, heads, D, device=dev, generator=gen) * 2).to(torch.bfloat16)
        sink = torch.randn(heads, device=dev, generator=gen)
        out = torch.zeros(B, heads, D, dtype=torch.bfloat16, device=dev)
        whole = torch.zeros_like(out)
        run_attention(lib, q, lists, lens, sink, [pool, pool], out)          # split over CTAs (few rows)
        run_attention(lib, q, lists, lens, sink, [pool, pool], whole, None)  # one CTA per row
        torch.cuda.synchronize()
        worst = ((out.float() - whole.float()).norm() / whole.float().norm()).item()
        notes.append(f"attention heads={heads}: split vs unsplit relative difference {worst:.2e}")
        ok &= worst < 1e-2
        worst = 0.0
        for b in range(B):
            n = int(lens[b])
            sel = lists[b:b + 1, :n]
            keep = sel[0] != -1
            ref = torch_attention(q[b:b + 1], sel[:, keep], pool, sink, D ** -0.5)
            err = ((out[b:b + 1].float() - ref.float()).norm() / ref.float().norm()).item()
            worst = max(worst, err)
        ok &= worst < 1e-2
        notes.append(f"attention heads={heads} entries={L}: worst relative error {worst:.2e}")
    return ok


def bench_indexer(lib, gen, B, ctx, k, results, key_scales):
    cand = ctx // 4
    nsets = max(2, min(8, int(512e6 // (B * cand * 68 + 1))))
    sets = [Indexer(lib, B, cand, k, gen, key_scales=key_scales) for _ in range(nsets)]
    row = {"bench": "indexer", "batch": B, "context": ctx, "candidates": cand, "k": k, "key_scales": key_scales}
    for name, fn in (("q_prep", Indexer.prep), ("scores", Indexer.score), ("topk", Indexer.topk),
                     ("total", Indexer.all)):
        row[name + "_us"] = time_graph(fn, sets, 20 if B * cand < 1e6 else 5)
    row["per_token_layer_us"] = row["total_us"] / B
    row["key_bytes"] = B * cand * 68
    row["scores_GBps"] = row["key_bytes"] / (row["scores_us"] * 1e-6) / 1e9
    if B == 1:
        row["torch_topk_us"] = time_graph(lambda ix: torch.topk(ix.scores.view(torch.bfloat16), k, dim=-1), sets, 20)
    results.append(row)
    print(json.dumps(row), flush=True)


def bench_attention(lib, gen, B, heads, topk, bw, mm, compile_ok, results):
    L = 128 + topk
    pages = max(64, (B * L) // MAIN_EPP + 1)
    nsets = max(2, min(8, int(256e6 // (B * L * 584 + B * heads * D * 4))))
    sets = []
    for _ in range(nsets):
        pool = random_fp8_pool(pages, gen)
        slots = torch.randint(0, pages * MAIN_EPP, (B, L), device=dev, generator=gen).int()
        lists = slots.clone()
        lists[:, 128:] |= (1 << 30)
        sets.append(dict(q=(torch.randn(B, heads, D, device=dev, generator=gen)).to(torch.bfloat16), lists=lists,
                         lens=torch.full((B,), L, dtype=torch.int32, device=dev), pool=pool,
                         sink=torch.randn(heads, device=dev, generator=gen),
                         out=torch.empty(B, heads, D, dtype=torch.bfloat16, device=dev)))
        sets[-1]["ws"] = attn_workspace(lib, sets[-1]["q"], lists)
    flops = 4.0 * heads * D * L * B
    bytes_ = B * L * 584 + 2 * B * heads * D * 2 + B * L * 4
    row = {"bench": "attention", "batch": B, "heads": heads, "entries": L}
    ours = lambda x: run_attention(lib, x["q"], x["lists"], x["lens"], x["sink"], [x["pool"], x["pool"]], x["out"],
                                   x["ws"])
    row["ours_us"] = time_graph(ours, sets, 20 if B < 64 else 5)
    row["ours_plain_us"] = time_plain(ours, sets, 100 if B < 64 else 30)
    row["TFLOPS"] = flops / (row["ours_us"] * 1e-6) / 1e12
    row["GBps"] = bytes_ / (row["ours_us"] * 1e-6) / 1e9
    row["pct_bf16_matmul"] = 100 * row["TFLOPS"] / mm
    row["pct_copy_bw"] = 100 * row["GBps"] / bw
    eager = lambda x: torch_attention(x["q"], x["lists"], x["pool"], x["sink"], D ** -0.5)
    for name, fn in (("torch_eager", eager), ("torch_compile", compiled_fn(torch_attention) if compile_ok else None)):
        if fn is None:
            continue
        f = fn if name == "torch_eager" else (lambda x, f=fn: f(x["q"], x["lists"], x["pool"], x["sink"], D ** -0.5))
        try:
            row[name + "_us"] = time_graph(f, sets[:2], 3)
            row["speedup_vs_" + name] = row[name + "_us"] / row["ours_us"]
        except Exception as e:
            row[name + "_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    results.append(row)
    print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--sections", default="checks,indexer,attention")
    ap.add_argument("--indexer-shapes", default="1x8192,1x131072,1x1048576,64x8192,64x131072,64x1048576",
                    help="batch x context pairs of the indexer benchmark")
    ap.add_argument("--key-scales", default="narrow,wide", help="spreads of the indexer keys' block scales to time")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    os.makedirs(args.out, exist_ok=True)
    lib = load(args.lib)
    gen = torch.Generator(device=dev)
    gen.manual_seed(12)
    props = torch.cuda.get_device_properties(0)
    bw = copy_bandwidth()
    mm = matmul_tflops()
    header = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
              "copy_GBps": bw, "bf16_matmul_TFLOPS": mm, "attn_smem_bytes": lib.strata_sparse_attn_smem_bytes()}
    print(json.dumps(header), flush=True)
    notes = []
    ok = checks(lib, gen, notes) if "checks" in sections else True
    print("\n".join(notes))
    print("CHECKS", "PASSED" if ok else "FAILED", flush=True)
    results = []

    def save():
        with open(os.path.join(args.out, "sparse.json"), "w") as f:
            json.dump({"header": header, "checks_ok": ok, "checks": notes, "results": results}, f, indent=1)
    save()
    shapes = [tuple(int(v) for v in sh.split("x")) for sh in args.indexer_shapes.split(",")]
    for spread, (B, ctx) in [(sp, sh) for sp in args.key_scales.split(",") for sh in shapes] if "indexer" in sections else ():
        try:
            bench_indexer(lib, gen, B, ctx, 512, results, spread)
        except Exception:
            results.append({"bench": "indexer", "batch": B, "context": ctx, "key_scales": spread,
                            "error": traceback.format_exc()})
            print(results[-1]["error"])
        save()
        torch.cuda.empty_cache()
    batches = (1, 8, 64, 128, 256) if not args.quick else (1, 64)
    for heads, topk in ((64, 512), (128, 1024)) if "attention" in sections else ():
        for B in batches:
            try:
                bench_attention(lib, gen, B, heads, topk, bw, mm, not args.skip_compile, results)
            except Exception:
                results.append({"bench": "attention", "batch": B, "heads": heads, "error": traceback.format_exc()})
                print(results[-1]["error"])
            save()
            torch.cuda.empty_cache()
    print(f"\n{props.name}: copy {bw:.0f} GB/s, bf16 matmul {mm:.0f} TFLOPS")
    for r in results:
        if "error" in r:
            print(r["bench"], r.get("batch"), "ERROR", r["error"].splitlines()[-1])
        elif r["bench"] == "indexer":
            print(f"indexer {r['key_scales']:>6} B={r['batch']:>3} ctx={r['context']:>8}: prep {r['q_prep_us']:.1f} scores {r['scores_us']:.1f} "
                  f"({r['scores_GBps']:.0f} GB/s) topk {r['topk_us']:.1f} total {r['total_us']:.1f} us = "
                  f"{r['per_token_layer_us']:.2f} us/token-layer" +
                  (f"; torch.topk {r['torch_topk_us']:.1f}" if 'torch_topk_us' in r else ""))
        else:
            print(f"attention H={r['heads']:>3} B={r['batch']:>3} L={r['entries']}: {r['ours_us']:.1f} us "
                  f"{r['TFLOPS']:.0f} TFLOPS ({r['pct_bf16_matmul']:.0f}% of matmul) {r['GBps']:.0f} GB/s "
                  f"({r['pct_copy_bw']:.0f}% of copy); eager {r.get('torch_eager_us', float('nan')):.0f} us "
                  f"(x{r.get('speedup_vs_torch_eager', float('nan')):.1f}), compile "
                  f"{r.get('torch_compile_us', float('nan')):.0f} us (x{r.get('speedup_vs_torch_compile', float('nan')):.1f})")
    save()


if __name__ == "__main__":
    main()
