#!/usr/bin/env python3
"""How exactly the FP8 GEMM kernels at 64 rows sum their products: fp32 outputs of strata_linear against the
float64 sum of the same exact products (dequantized weights x FP8-round-tripped activations), for
  narrow: weights and activations whose products sum exactly even in 14 significant bits (a wrong layout or
          scale shows here; a kernel that sums in fewer bits than fp32 does not),
  wide:   random e4m3 bytes (every exponent), Gaussian activations with per-block magnitudes (LinearParityTest's data),
  gauss:  weights quantized from Gaussians per 128x128 block as a checkpoint's are.
Libraries to compare: the tree's, an older one, or one built with docs/data/fp8xfp8-wgmma-attempt-2026-12-02.patch
(e4m3 x e4m3 wgmma, not kept: it is exact on `narrow` and not on the others).
usage (from the repository root, on a GPU host): python3 backend-cuda/bench/fp8_accum_check.py LIB [LIB...]"""
import sys
import torch
sys.path.insert(0, "backend-cuda/bench")
from bench_linear import load, workspace_bytes, fp8_round_trip, dequant, check, FP8

dev = torch.device("cuda")
rows, cols, m = 1024, 4096, 64
g = torch.Generator(device=dev).manual_seed(7)


def data(kind):
    if kind == "narrow":  # e4m3 1.0..1.875 with random signs; activations +-1: sums of <= 4096 multiples of 1/8
        w = (0x38 + torch.randint(0, 8, (rows * cols,), generator=g, device=dev)) | (torch.randint(0, 2, (rows * cols,), generator=g, device=dev) << 7)
        w = w.to(torch.uint8)
        x = (torch.randint(0, 2, (m, cols), generator=g, device=dev) * 2 - 1).to(torch.bfloat16)
        s = torch.full((rows // 128 * cols // 128,), 127, dtype=torch.uint8, device=dev)
    elif kind == "wide":
        w = torch.randint(0, 256, (rows * cols,), generator=g, device=dev, dtype=torch.uint8)
        w[(w & 0x7f) == 0x7f] = 0x7e
        x = (torch.randn(m, cols, generator=g, device=dev) * torch.pow(2.0, torch.randint(-3, 4, (m, cols // 128, 1), generator=g, device=dev)).repeat_interleave(128, 1).reshape(m, cols)).to(torch.bfloat16)
        s = torch.randint(116, 121, (rows // 128 * cols // 128,), generator=g, device=dev, dtype=torch.uint8)
    else:
        wf = torch.randn(rows, cols, generator=g, device=dev) * 0.02
        blk = wf.reshape(rows // 128, 128, cols // 128, 128).abs().amax((1, 3))
        sc = torch.pow(2.0, torch.ceil(torch.log2(blk / 448)))
        q = (wf / sc.repeat_interleave(128, 0).repeat_interleave(128, 1)).to(torch.float8_e4m3fn)
        w = q.view(torch.uint8).reshape(-1)
        s = (torch.log2(sc).reshape(-1) + 127).to(torch.uint8)
        x = torch.randn(m, cols, generator=g, device=dev).to(torch.bfloat16)
    return w, s, x


for path in sys.argv[1:]:
    lib = load(path)
    for kind in ("narrow", "wide", "gauss"):
        w, s, x = data(kind)
        ref = fp8_round_trip(x).double() @ dequant(FP8, w, s, rows, cols).T
        y = torch.full((m, rows), float("nan"), dtype=torch.float32, device=dev)
        ws = torch.empty(workspace_bytes(m, cols), dtype=torch.uint8, device=dev)
        st = torch.cuda.current_stream().cuda_stream
        check(lib.strata_linear(FP8, w.data_ptr(), s.data_ptr(), rows, cols, 1, x.data_ptr(), cols, m, y.data_ptr(),
                                rows, 0, 1, ws.data_ptr(), st), "strata_linear")
        torch.cuda.synchronize()
        d = (y.double() - ref).abs()
        norm = ref.norm(dim=1, keepdim=True)
        rel = d / ref.abs().clamp_min(1e-30)
        print(f"{path.split('/')[-2]:12s} {kind:6s}: exact {int((d == 0).sum())}/{d.numel()}, worst {d.max().item():.3e} abs, "
              f"{(d / norm).max().item():.2e} of row norm, median {rel.median().item():.2e} relative, "
              f"p99 {rel.reshape(-1).kthvalue(int(0.99 * rel.numel())).values.item():.2e}")
