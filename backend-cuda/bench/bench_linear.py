#!/usr/bin/env python3
"""The decode GEMMs of one V4-Flash layer at kernel level: strata_linear (attention projections, shared
expert) and strata_moe_expert_linear (routed FP4 experts), each timed alone by CUDA events over a CUDA
graph of several calls, with enough weight copies rotated that no call reads its weights from L2.
Reports the weight bytes each call must read, the time, and that as a share of the device-to-device copy
bandwidth measured in the same run (read + write counted, as the decode benchmark's roofline does).

usage: python3 bench_linear.py --lib libstrata_cuda.so [--batches 1,8,64] [--out DIR]
"""
import argparse
import ctypes
import json
import math
import os
import random

import torch

from bench_kernels import copy_bandwidth  # the kernel benchmarks' device-to-device copy, read + write counted

I64, I32 = ctypes.c_int64, ctypes.c_int
dev = torch.device("cuda")
BF16, F32, FP8, FP4 = 0, 1, 2, 3
DIM, EXPERTS, TOPK, INTER = 4096, 256, 6, 2048
VOCAB = 129280  # V4-Flash's vocabulary: the bf16 output head's rows


def load(path):
    lib = ctypes.CDLL(path)
    lib.strata_linear.restype = I32
    lib.strata_linear.argtypes = [I32, I64, I64, I32, I32, I32, I64, I32, I32, I64, I32, I32, I32, I64, I64]
    lib.strata_moe_expert_linear.restype = I32
    lib.strata_moe_expert_linear.argtypes = [I32, I64, I64, I64, I64, I32, I32, I32, I32, I32, I64, I64, I64, I64,
                                             I32, I64, I32, I64]
    if hasattr(lib, "strata_fp4_prepare"):  # libraries before it read the checkpoint's FP4 bytes as they are
        lib.strata_fp4_prepare.restype = I32
        lib.strata_fp4_prepare.argtypes = [I64, I64, I64, I64, ctypes.POINTER(ctypes.c_int)]
    if hasattr(lib, "strata_moe_expert_linear_pair"):  # w1 and w3 in one launch (libraries from 2 Dec 2026)
        lib.strata_moe_expert_linear_pair.restype = I32
        lib.strata_moe_expert_linear_pair.argtypes = [I32, I64, I64, I64, I64, I64, I64, I32, I32, I32, I32, I32, I64,
                                                      I64, I64, I64, I32, I64, I64, I32, I64]
    lib.strata_moe_tile_rows.restype = I32
    lib.strata_moe_tile_rows.argtypes = [I32, I32, I32]
    return lib


def weight_bytes(fmt, rows, cols):
    data = rows * cols * {BF16: 2, F32: 4, FP8: 1, FP4: 0.5}[fmt]
    scale = {FP8: math.ceil(rows / 128) * math.ceil(cols / 128), FP4: rows * cols // 32}.get(fmt, 0)
    return int(data), int(scale)


def random_weight(fmt, rows, cols, copies=1):
    data, scale = weight_bytes(fmt, rows, cols)
    if fmt == BF16:  # random bytes would make NaNs
        w = (torch.randn(copies, data // 2, device=dev) * 0.02).to(torch.bfloat16).view(torch.uint8)
    else:
        w = torch.randint(0, 256, (copies, data), dtype=torch.uint8, device=dev)
    if fmt == FP8:  # keep e4m3 finite: clear the exponent-all-ones-mantissa-all-ones NaN codes
        w[(w & 0x7f) == 0x7f] = 0x7e
    s = torch.randint(118, 128, (copies, max(scale, 1)), dtype=torch.uint8, device=dev)
    return w, s


E2M1 = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float64)


def dequant(fmt, w, s, rows, cols):
    """The weight matrix [rows, cols] in float64, from its checkpoint bytes (as the CPU backend decodes them)."""
    if fmt == BF16:
        return w.view(torch.bfloat16).reshape(rows, cols).double()
    if fmt == FP8:
        v = w.view(torch.float8_e4m3fn).reshape(rows, cols).double()
        sc = torch.pow(2.0, s[:math.ceil(rows / 128) * math.ceil(cols / 128)].double() - 127)
        sc = sc.reshape(math.ceil(rows / 128), math.ceil(cols / 128))
        return v * sc.repeat_interleave(128, 0)[:rows].repeat_interleave(128, 1)[:, :cols]
    codes = torch.stack([w & 15, w >> 4], dim=-1).reshape(rows, cols).long()  # low nibble first
    sc = torch.pow(2.0, s[:rows * cols // 32].double() - 127).reshape(rows, cols // 32)
    return E2M1.to(w.device)[codes] * sc.repeat_interleave(32, 1)


def fp8_round_trip(x):
    """ActivationQuant.fp8RoundTrip per row and 128 channels: the activation FP8/FP4 layers multiply."""
    v = x.float().reshape(x.shape[0], -1, 128)
    amax = v.abs().amax(-1, keepdim=True).clamp_min(1e-4)
    sc = torch.pow(2.0, torch.ceil(torch.log2(amax / 448.0)))
    q = (v / sc).clamp(-448, 448).to(torch.float8_e4m3fn).float() * sc
    return q.reshape(x.shape).to(torch.bfloat16)


def rel_err(y, ref):
    return ((y.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


SAME_WEIGHTS = False  # --same-weights: every call of a graph reads the first copy (from L2 where it fits)


def timed(calls, reps=5):
    """Median seconds per call of the list of zero-argument launches, replayed as one CUDA graph."""
    if SAME_WEIGHTS:
        calls = [calls[0]] * max(8, len(calls))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for c in calls:
            c(s.cuda_stream)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for c in calls:
            c(s.cuda_stream)
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3 / len(calls))
    ts.sort()
    return ts[len(ts) // 2]


def workspace_bytes(m, inp):
    """LinearKernels.workspaceBytes: the FP8 round trip, or the f16 staging of x and its scales per 128."""
    align = lambda b: (b + 255) // 256 * 256
    return max(256, align(2 * m * inp) + align(4 * ((m + 3) // 4 * 4) * math.ceil(inp / 128)))


def fp4_prepare(lib, w, s):
    """FP4 checkpoint bytes (one copy: w, s flat uint8 tensors) into the kernels' layout in place, as the engine
    does at load; returns the fmt code (with the ordinary-scales flag when strata_fp4_prepare reports it)."""
    if not hasattr(lib, "strata_fp4_prepare"):
        return FP4
    ordinary = ctypes.c_int(0)
    check(lib.strata_fp4_prepare(w.data_ptr(), w.numel(), s.data_ptr(), s.numel(), ctypes.byref(ordinary)),
          "strata_fp4_prepare")
    return FP4 | (0x100 if ordinary.value else 0)


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUDA error {rc}")


def plain(lib, name, fmt, rows, cols, m, groups=1):
    data, scale = weight_bytes(fmt, rows * groups, cols)
    copies = max(2, min(16, math.ceil(512e6 / (data + scale))))
    w, s = random_weight(fmt, rows * groups, cols, copies)
    quant = fmt in (FP8, FP4) and groups == 1  # the engine quantizes wo_a's input itself
    x = (torch.randn(m, cols * groups, device=dev) * 0.5).to(torch.bfloat16)
    if fmt in (FP8, FP4) and not quant:  # as the engine hands wo_a its input: round-tripped per 128 already
        x = fp8_round_trip(x)
    y = torch.empty(m, rows * groups, dtype=torch.bfloat16, device=dev)
    ws = torch.empty(workspace_bytes(m, cols * groups), dtype=torch.uint8, device=dev)
    # the float64 reference first, from the inputs as created: every row against the products of the
    # dequantized weights and the (FP8-round-tripped) activations
    wd = dequant(fmt, w[0], s[0], rows * groups, cols)
    xq = fp8_round_trip(x) if fmt in (FP8, FP4) else x
    ref_all = torch.cat([xq[:, g * cols:(g + 1) * cols].double() @ wd[g * rows:(g + 1) * rows].T for g in range(groups)], 1)
    x_before = x.clone()
    del wd

    def call(i):
        return lambda st: check(lib.strata_linear(fmt, w[i].data_ptr(), s[i].data_ptr(), rows, cols, groups,
                                                  x.data_ptr(), cols * groups, m, y.data_ptr(), rows * groups, 1,
                                                  int(quant), ws.data_ptr(), st), name)
    t = timed([call(i) for i in range(copies)])
    # the first rows again through the one-row kernel: the batched kernels must agree up to summation order
    # (both outputs start as NaN, so an output a kernel leaves unwritten shows)
    torch.cuda.synchronize()
    st = torch.cuda.current_stream().cuda_stream
    y.fill_(float("nan"))
    y2 = torch.full((1, rows * groups), float("nan"), dtype=torch.bfloat16, device=dev)
    check(lib.strata_linear(fmt, w[0].data_ptr(), s[0].data_ptr(), rows, cols, groups, x.data_ptr(), cols * groups, 1,
                            y2.data_ptr(), rows * groups, 1, int(quant), ws.data_ptr(), st), name)
    call(0)(st)
    torch.cuda.synchronize()
    err = rel_err(y[0], y2[0].double())
    out = {"name": name, "fmt": fmt, "rows": rows * groups, "cols": cols, "m": m, "bytes": data + scale, "s": t,
           "row0_vs_m1": err, "vs_float64": rel_err(y, ref_all)}
    # nothing may write the input: say so if something did (seen as NaNs in it in earlier runs)
    changed = int((x.view(torch.int16) != x_before.view(torch.int16)).sum())
    if changed or math.isnan(out["vs_float64"]):
        out["input_elements_changed"] = changed
        out["nan_counts"] = {k: int(v.isnan().sum()) for k, v in (("y", y), ("ref", ref_all), ("x", x))}
    return out


def experts(lib, name, fmt, rows, cols, m, tile=None, pad=0, paired=False):
    """pad: bytes between one expert's weights and the next (the engine stacks them with none). paired: a second
    matrix of the same shape (w3 beside w1) in the same launch; its outputs must equal two single launches'."""
    pairs = m * TOPK
    tile = tile or lib.strata_moe_tile_rows(m, TOPK, EXPERTS)
    data, scale = weight_bytes(fmt, rows, cols)
    stride = data + pad
    copies = max(2, min(8, math.ceil(1.2e9 / (EXPERTS * (stride + scale)))))

    def stacked():  # every copy's experts back to back, pad bytes apart
        w, s = random_weight(fmt, rows * EXPERTS, cols, copies)
        if pad:
            w = torch.cat([w.view(copies, EXPERTS, data),
                           torch.zeros(copies, EXPERTS, pad, dtype=torch.uint8, device=dev)], 2).view(copies, EXPERTS * stride)
        return w, s

    def prepared(w, s):  # the fmt code every copy gets once in the kernels' layout
        return {fp4_prepare(lib, w[i], s[i]) for i in range(copies)} if fmt == FP4 else {fmt}

    w, s = stacked()
    rnd = random.Random(m)
    ids = sorted(e for _ in range(m) for e in rnd.sample(range(EXPERTS), TOPK))
    counts = [ids.count(e) for e in range(EXPERTS)]
    offsets, tile_offsets = [0], [0]
    for c in counts:
        offsets.append(offsets[-1] + c)
        tile_offsets.append(tile_offsets[-1] + (c + tile - 1) // tile)
    touched = sum(1 for c in counts if c) * (data + scale)
    off = torch.tensor(offsets, dtype=torch.int32, device=dev)
    toff = torch.tensor(tile_offsets, dtype=torch.int32, device=dev)
    gather = torch.tensor([p // TOPK for p in range(pairs)], dtype=torch.int32, device=dev)
    x = (torch.randn(m, cols, device=dev) * 0.5).to(torch.bfloat16)
    y = torch.empty(pairs, rows, dtype=torch.bfloat16, device=dev)
    w_ckpt = w[0].clone() if fmt == FP4 else w[0]  # the checkpoint bytes of copy 0, for the reference below
    codes = prepared(w, s)
    if paired:
        w3, s3 = stacked()
        codes |= prepared(w3, s3)
        y3 = torch.empty(pairs, rows, dtype=torch.bfloat16, device=dev)
    if len(codes) != 1:
        raise SystemExit(f"{name}: the copies' scale flags differ: {sorted(codes)}")
    code = codes.pop()

    def single(wi, si, xx, yy, st):
        check(lib.strata_moe_expert_linear(code, wi.data_ptr(), si.data_ptr(), stride, scale, rows, cols, EXPERTS, pairs,
                                           tile, off.data_ptr(), toff.data_ptr(), gather.data_ptr(), xx.data_ptr(), cols,
                                           yy.data_ptr(), rows, st), name)

    def pair(i, xx, st):
        check(lib.strata_moe_expert_linear_pair(code, w[i].data_ptr(), s[i].data_ptr(), w3[i].data_ptr(), s3[i].data_ptr(),
                                                stride, scale, rows, cols, EXPERTS, pairs, tile, off.data_ptr(),
                                                toff.data_ptr(), gather.data_ptr(), xx.data_ptr(), cols, y.data_ptr(),
                                                y3.data_ptr(), rows, st), name)

    def call(i):
        return (lambda st: pair(i, x, st)) if paired else (lambda st: single(w[i], s[i], x, y, st))
    t = timed([call(i) for i in range(copies)])
    same = None
    if paired:  # the paired launch's two outputs against one launch per matrix, bit for bit
        st = torch.cuda.current_stream().cuda_stream
        ya, yb = torch.full_like(y, float("nan")), torch.full_like(y3, float("nan"))
        y.fill_(float("nan"))
        y3.fill_(float("nan"))
        single(w[0], s[0], x, ya, st)
        single(w3[0], s3[0], x, yb, st)
        pair(0, x, st)
        torch.cuda.synchronize()
        same = bool(torch.equal(y.view(torch.int16), ya.view(torch.int16))
                    and torch.equal(y3.view(torch.int16), yb.view(torch.int16)))
    # every slot against float64 products (copy 0's weights; the activations were FP8-round-tripped by the
    # layer before, so x is round-tripped here first)
    xq = fp8_round_trip(x)
    y.fill_(float("nan"))
    torch.cuda.synchronize()
    if paired:
        pair(0, xq, torch.cuda.current_stream().cuda_stream)
    else:
        single(w[0], s[0], xq, y, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    err = 0.0
    for e in sorted(set(ids))[:16]:
        wd = dequant(fmt, w_ckpt[e * stride:e * stride + data], s[0][e * scale:(e + 1) * scale], rows, cols)
        for slot in range(offsets[e], offsets[e + 1]):
            err = max(err, rel_err(y[slot], xq[gather[slot].item()].double() @ wd.T))
    out = {"name": name, "fmt": fmt, "rows": rows, "cols": cols, "m": m, "tile_rows": tile,
           "experts_touched": sum(1 for c in counts if c), "bytes": touched * (2 if paired else 1), "s": t,
           "vs_float64": err}
    if paired:
        out["paired_equals_single"] = same
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--batches", default="1,8,64")
    ap.add_argument("--out", default=None)
    ap.add_argument("--tiles", default="", help="also time the w1 experts GEMM with these tile rows")
    ap.add_argument("--expert-pads", default="", help="also time the w1 experts GEMM with these byte gaps between experts")
    ap.add_argument("--plain-only", action="store_true", help="only the plain GEMMs (no routed experts)")
    ap.add_argument("--experts-only", action="store_true", help="only the routed experts' GEMMs")
    ap.add_argument("--same-weights", action="store_true",
                    help="every call reads the same weight copy: what a GEMM takes when its weights are in L2")
    a = ap.parse_args()
    global SAME_WEIGHTS
    SAME_WEIGHTS = a.same_weights
    lib = load(a.lib)
    bw = copy_bandwidth()
    print(f"device copy bandwidth {bw:.0f} GB/s (read + write)")
    rows = []
    for m in [int(b) for b in a.batches.split(",")]:
        plain_cases = [
            lambda: plain(lib, "wq_a", FP8, 1024, DIM, m),
            lambda: plain(lib, "wq_b", FP8, 64 * 512, 1024, m),
            lambda: plain(lib, "wkv", FP8, 512, DIM, m),
            lambda: plain(lib, "wq_a+wkv stacked", FP8, 1024 + 512, DIM, m),
            lambda: plain(lib, "wo_a (8 groups)", FP8, 1024, DIM, m, groups=8),
            lambda: plain(lib, "wo_b", FP8, DIM, 8192, m),
            lambda: plain(lib, "shared w1", FP8, INTER, DIM, m),
            lambda: plain(lib, "shared w2", FP8, DIM, INTER, m),
            lambda: plain(lib, "gate (bf16)", BF16, EXPERTS, DIM, m),
            lambda: plain(lib, "c4 compressor (bf16)", BF16, 2048, DIM, m),  # wkv and wgate stacked, overlapping
            lambda: plain(lib, "head (bf16)", BF16, VOCAB, DIM, m),
        ]
        expert_cases = [
            lambda: experts(lib, "experts w1 (fp4)", FP4, INTER, DIM, m),
            lambda: experts(lib, "experts w2 (fp4)", FP4, DIM, INTER, m),
        ]
        if hasattr(lib, "strata_moe_expert_linear_pair"):
            expert_cases.append(lambda: experts(lib, "experts w1+w3 pair", FP4, INTER, DIM, m, paired=True))
        cases = plain_cases if a.plain_only else expert_cases if a.experts_only else plain_cases + expert_cases
        if a.tiles:
            for tile in [int(t) for t in a.tiles.split(",")]:
                cases.append(lambda tile=tile: experts(lib, "experts w1 (fp4)", FP4, INTER, DIM, m, tile))
        for pad in [int(p) for p in a.expert_pads.split(",") if p]:
            cases.append(lambda pad=pad: experts(lib, f"w1, pad {pad}", FP4, INTER, DIM, m, pad=pad))
        for c in cases:
            r = c()
            r["gbps"] = r["bytes"] / r["s"] / 1e9
            r["of_copy_bw"] = r["gbps"] / bw
            rows.append(r)
            extra = f" tile {r['tile_rows']}, {r['experts_touched']} experts" if "tile_rows" in r else ""
            if "row0_vs_m1" in r:
                extra += f" (row 0 vs m=1: {r['row0_vs_m1']:.1e} of max)"
            extra += f" vs float64: {r['vs_float64']:.1e} of max"
            if "paired_equals_single" in r:
                extra += f", outputs {'equal' if r['paired_equals_single'] else 'DIFFERENT'} to single launches"
            if "nan_counts" in r:
                extra += f" input elements changed {r['input_elements_changed']}, NaN counts {r['nan_counts']}"
            print(f"m={m:<3} {r['name']:<18} {r['rows']:>6}x{r['cols']:<5} {r['bytes'] / 1e6:8.2f} MB "
                  f"{r['s'] * 1e6:8.1f} us {r['gbps']:7.0f} GB/s = {100 * r['of_copy_bw']:5.1f}% of copy{extra}",
                  flush=True)
            torch.cuda.empty_cache()
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "linear.json"), "w") as f:
            json.dump({"copy_gbps": bw, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
