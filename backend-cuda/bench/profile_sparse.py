#!/usr/bin/env python3
"""One launch of each indexer / top-k / attention kernel at a few sizes, for a profiler (ncu) to measure."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_sparse import Indexer, MAIN_EPP, D, load, random_fp8_pool, run_attention  # noqa: E402
from bench_kernels import dev  # noqa: E402

lib = load(sys.argv[1])
gen = torch.Generator(device=dev)
gen.manual_seed(3)
for B, cand in ((1, 2048), (1, 262144), (64, 32768)):
    ix = Indexer(lib, B, cand, 512, gen)
    ix.all()
for B, heads, L in ((1, 64, 640), (64, 128, 1152)):
    pool = random_fp8_pool(max(64, B * L // MAIN_EPP + 1), gen)
    lists = torch.randint(0, pool.numel() // (MAIN_EPP * 584) * MAIN_EPP, (B, L), device=dev, generator=gen).int()
    lens = torch.full((B,), L, dtype=torch.int32, device=dev)
    q = torch.randn(B, heads, D, device=dev, generator=gen).to(torch.bfloat16)
    out = torch.empty_like(q)
    run_attention(lib, q, lists, lens, torch.randn(heads, device=dev), [pool], out)
torch.cuda.synchronize()
print("profiled launches done")
