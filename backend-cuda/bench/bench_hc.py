#!/usr/bin/env python3
"""The hyper-connection steps at V4-Flash's width (hc 4 x 4096), each timed alone (bench_kernels.time_graph: the
median of five replays of a CUDA graph of 20 calls): the pre (strata_hc_pre: the mixes' partial dot products,
then Sinkhorn and the pre-mix RMSNorm), the post then the pre (strata_hc_post + strata_hc_pre), and both fused
(strata_hc_post_pre). Prints a digest of the outputs, so runs with different kernel choices
(STRATA_HC_MIX_TOKENS=1|2|4) can be compared bit for bit, and checks the fused step against the two it replaces.

usage: STRATA_HC_MIX_TOKENS=4 python3 bench_hc.py --lib libstrata_cuda.so [--tokens 1,8,64,256]
"""
import argparse
import ctypes
import hashlib

import torch

from bench_kernels import time_graph  # median µs per call of a CUDA graph of the calls

I64, I32, F = ctypes.c_int64, ctypes.c_int, ctypes.c_float
HC, DIM, ITERS = 4, 4096, 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--tokens", default="1,8,64,256")
    a = ap.parse_args()
    lib = ctypes.CDLL(a.lib)
    lib.strata_hc_pre.restype = I32
    lib.strata_hc_pre.argtypes = [I64] * 8 + [I32, I32, I32, I32, F, F, I64]
    lib.strata_hc_post.restype = I32
    lib.strata_hc_post.argtypes = [I64] * 4 + [I32, I32, I32, I64]
    lib.strata_hc_post_pre.restype = I32
    lib.strata_hc_post_pre.argtypes = [I64] * 10 + [I32, I32, I32, I32, F, F, I64]
    lib.strata_hc_partials_bytes.restype = I64
    lib.strata_hc_partials_bytes.argtypes = [I32, I32, I32]
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(5)
    mix = (2 + HC) * HC
    fn = torch.randn(mix, HC * DIM, device=dev, generator=g) * 0.01
    base = torch.randn(mix, device=dev, generator=g) * 0.1
    scale = torch.rand(3, device=dev, generator=g) + 0.5
    norm = torch.rand(DIM, device=dev, generator=g) + 0.5
    for n in [int(t) for t in a.tokens.split(",")]:
        h = (torch.randn(n, HC, DIM, device=dev, generator=g)).to(torch.bfloat16)
        out_x = torch.empty(n, DIM, dtype=torch.bfloat16, device=dev)
        out_mix = torch.empty(n, 2 * HC + HC * HC, dtype=torch.float32, device=dev)
        part = torch.empty(lib.strata_hc_partials_bytes(n, HC, DIM) // 4 + 1, dtype=torch.float32, device=dev)
        y = torch.randn(n, DIM, device=dev, generator=g).to(torch.bfloat16)
        mix0 = torch.rand(n, 2 * HC + HC * HC, device=dev, generator=g)
        next_a, next_b = torch.empty_like(h), torch.empty_like(h)
        x_a, x_b = torch.empty_like(out_x), torch.empty_like(out_x)
        mix_a, mix_b = mix0.clone(), mix0.clone()

        def ok(rc):
            assert rc == 0, rc

        def st():
            return torch.cuda.current_stream().cuda_stream

        def pre(_=None):
            ok(lib.strata_hc_pre(h.data_ptr(), fn.data_ptr(), base.data_ptr(), scale.data_ptr(), norm.data_ptr(),
                                 out_x.data_ptr(), out_mix.data_ptr(), part.data_ptr(), n, HC, DIM, ITERS, 1e-6, 1e-6,
                                 st()))

        def post_then_pre(_=None):
            ok(lib.strata_hc_post(y.data_ptr(), h.data_ptr(), mix_a.data_ptr(), next_a.data_ptr(), n, HC, DIM,
                                  st()))
            ok(lib.strata_hc_pre(next_a.data_ptr(), fn.data_ptr(), base.data_ptr(), scale.data_ptr(), norm.data_ptr(),
                                 x_a.data_ptr(), mix_a.data_ptr(), part.data_ptr(), n, HC, DIM, ITERS, 1e-6, 1e-6,
                                 st()))

        def fused(_=None):
            ok(lib.strata_hc_post_pre(y.data_ptr(), h.data_ptr(), next_b.data_ptr(), fn.data_ptr(), base.data_ptr(),
                                      scale.data_ptr(), norm.data_ptr(), x_b.data_ptr(), mix_b.data_ptr(),
                                      part.data_ptr(), n, HC, DIM, ITERS, 1e-6, 1e-6, st()))
        pre()
        post_then_pre()
        fused()
        torch.cuda.synchronize()
        same = (torch.equal(next_a.view(torch.int16), next_b.view(torch.int16))
                and torch.equal(x_a.view(torch.int16), x_b.view(torch.int16))
                and torch.equal(mix_a.view(torch.int32), mix_b.view(torch.int32)))
        digest = hashlib.sha1(out_x.view(torch.int16).cpu().numpy().tobytes()
                              + out_mix.view(torch.int32).cpu().numpy().tobytes()).hexdigest()[:16]
        # mixes are rewritten by every call: timed from the inputs as they are then (values do not change the work)
        t_pre, t_post_pre, t_fused = (time_graph(f, [None] * 20, 1) for f in (pre, post_then_pre, fused))
        print(f"tokens {n:4d}: pre {t_pre:7.2f} us; post + pre {t_post_pre:7.2f} us; fused {t_fused:7.2f} us; "
              f"pre outputs {digest}; fused equals post + pre: {same}", flush=True)


if __name__ == "__main__":
    main()
