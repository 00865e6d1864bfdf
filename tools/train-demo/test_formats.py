"""Numpy-only checks of stio.py against the bundled fixtures (run anywhere: python3 tools/train-demo/test_formats.py).

* (skipped with a message when models/dsv4-tiny-fp8 is absent) every FP8 weight of models/dsv4-tiny-fp8 decodes and re-encodes (with its own scales) bit-identically;
* every FP4 expert weight likewise; re-quantizing a decoded weight with our own scale choice is lossless;
* BF16 round trip, the e4m3 code table, e2m1 ties to even, the activation round trips are idempotent;
* a checkpoint written by write_checkpoint reads back identically, and the demo configs' export sizes fit.
"""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stio  # noqa: E402
import demo_config  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FP8 = os.path.join(ROOT, "models", "dsv4-tiny-fp8")
STABLE = os.path.join(ROOT, "models", "dsv4-tiny-stable")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def fixture_fp8_checks(raw):
    """FP8/FP4 re-encoding and write/read round trip of models/dsv4-tiny-fp8 (skipped when absent)."""
    n8 = n4 = nb = 0
    ok8 = ok4 = okb = own = True
    for name, (dt, arr) in raw.items():
        if dt == "F8_E4M3":
            sc = raw[name[:-len(".weight")] + ".scale"][1]
            w = stio.fp8_weight_decode(arr, sc)
            c, _ = stio.fp8_weight_encode(w, sc)
            ok8 &= np.array_equal(c, arr.view(np.uint8))
            c2, s2 = stio.fp8_weight_encode(w)
            own &= np.array_equal(stio.fp8_weight_decode(c2, s2), w)
            n8 += 1
        elif dt == "I8":
            sc = raw[name[:-len(".weight")] + ".scale"][1]
            w = stio.fp4_weight_decode(arr, sc)
            p, _ = stio.fp4_weight_encode(w, sc)
            ok4 &= np.array_equal(p.view(np.uint8), arr.view(np.uint8))
            p2, s2 = stio.fp4_weight_encode(w)
            own &= np.array_equal(stio.fp4_weight_decode(p2, s2), w)
            n4 += 1
        elif dt == "BF16":
            okb &= np.array_equal(stio.bf16_bits(stio.bf16_to_f32(arr)), arr)
            nb += 1
    check(n8 > 0 and ok8, f"{n8} FP8 fixture weights re-encode bit-identically")
    check(n4 > 0 and ok4, f"{n4} FP4 fixture weights re-encode bit-identically (low nibble = even element)")
    check(okb, f"{nb} BF16 fixture tensors round-trip")
    check(own, "re-quantizing decoded FP8/FP4 weights with our own scales is lossless")
    roundtrip(raw, "fp8 fixture")


def roundtrip(raw, what):
    """write/read round trip of a whole checkpoint"""
    with tempfile.TemporaryDirectory() as d:
        stio.write_checkpoint(d, raw)
        back = stio.read_checkpoint(d)
        same = set(back) == set(raw) and all(back[k][0] == raw[k][0] and back[k][1].shape == raw[k][1].shape
                                             and np.array_equal(back[k][1].view(np.uint8), raw[k][1].view(np.uint8))
                                             for k in raw)
        check(same, "write_checkpoint/read_checkpoint round trip (%s, all dtypes)" % what)
        idx = os.path.join(d, "model.safetensors.index.json")
        check(os.path.isfile(idx) and len(os.listdir(d)) == 3, "two shards + index written")


def main():
    # e4m3 table: every non-NaN code encodes back to itself
    codes = np.arange(256, dtype=np.uint8)
    vals = stio.FP8_TABLE[codes]
    finite = ~np.isnan(vals)
    check(np.array_equal(stio.e4m3_encode(vals[finite]), codes[finite]), "e4m3 encode(decode(c)) == c for all 254 codes")
    # RNE between codes: midpoint of 1.0 (m=0) and 1.125 (m=1) goes to 1.0, of 1.125 and 1.25 to 1.25
    check(stio.FP8_TABLE[stio.e4m3_encode(np.float32(1.0625))] == 1.0
          and stio.FP8_TABLE[stio.e4m3_encode(np.float32(1.1875))] == 1.25, "e4m3 ties to even")
    check(stio.FP8_TABLE[stio.e4m3_encode(np.float32(2.0 ** -10))] == 0.0
          and stio.FP8_TABLE[stio.e4m3_encode(np.float32(3 * 2.0 ** -10))] == 2.0 ** -8, "e4m3 subnormal ties to even")
    t = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.75], dtype=np.float32)
    check(np.array_equal(stio.e2m1_round(t), np.array([0, 1, 1, 2, 2, 4, 4, 6, -1], dtype=np.float32)),
          "e2m1 ties to even and saturation")
    check(np.array_equal(stio.pow2_ceil(np.array([1.0, 1.5, 0.75, 3e-7], dtype=np.float32)),
                         np.array([1.0, 2.0, 1.0, 2.0 ** -21], dtype=np.float32)), "pow2_ceil")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 512)) * np.exp(rng.standard_normal((64, 1)) * 3)).astype(np.float32)
    r8 = stio.fp8_roundtrip(x, 64)
    check(np.array_equal(stio.fp8_roundtrip(r8, 64), r8), "fp8 activation round trip is idempotent")
    check(np.array_equal(stio.bf16_round(r8), r8), "fp8 round-trip values are bf16-exact")
    r4 = stio.fp4_roundtrip(x, 32)
    check(np.array_equal(stio.fp4_roundtrip(r4, 32), r4), "fp4 activation round trip is idempotent")
    rel = np.abs(r8 - x).max() / np.abs(x).max()
    check(rel < 0.07, f"fp8 round trip error small ({rel:.4f})")

    have_fp8 = os.path.isfile(os.path.join(FP8, "config.json"))
    if have_fp8:
        raw = stio.read_checkpoint(FP8)
        fixture_fp8_checks(raw)
    else:
        print("skip %s is absent: no FP8/FP4 fixture re-encoding or fp8 catalogue checks (write/read round trip "
              "done on the stable fixture instead)" % os.path.relpath(FP8, ROOT))
        roundtrip(stio.read_checkpoint(STABLE), "stable fixture")

    # FP8 weight quantization of a random matrix: error bounded by the e4m3 mantissa
    w = (rng.standard_normal((300, 200)) * 0.02).astype(np.float32)
    c, s = stio.fp8_weight_encode(w)
    check(s.shape == (3, 2) and np.abs(stio.fp8_weight_decode(c, s) - w).max() <= np.abs(w).max() / 8,
          "fp8 weight quantization of a ragged matrix")
    p, s = stio.fp4_weight_encode(w[:, :192])
    check(p.shape == (300, 96) and p.dtype == np.int8 and s.shape == (300, 6), "fp4 packing shapes")

    deq = stio.dequantized_checkpoint(STABLE)
    check(deq["layers.0.ffn.gate.tid2eid"].dtype == np.int64 and deq["embed.weight"].dtype == np.float32,
          "dequantized_checkpoint of the stable fixture")

    # demo configs: catalogue-complete tensor list and export sizes
    cfg = demo_config.demo_config()
    names = demo_config.tensor_specs(cfg, quantized=False)
    fixture_cfg = demo_config.load_json(os.path.join(STABLE, "config.json"))
    fx = demo_config.tensor_specs(fixture_cfg, quantized=False, with_mtp=True)
    fixture_raw = stio.read_checkpoint(STABLE)
    check({k: (v[0], list(v[1])) for k, v in fx.items()}
          == {k: (v[0], list(v[1].shape)) for k, v in fixture_raw.items()},
          "tensor_specs reproduces the stable fixture's names, dtypes and shapes")
    if have_fp8:
        fq = demo_config.tensor_specs(demo_config.load_json(os.path.join(FP8, "config.json")), quantized=True,
                                      with_mtp=True)
        check({k: (v[0], list(v[1])) for k, v in fq.items()} == {k: (v[0], list(v[1].shape)) for k, v in raw.items()},
              "tensor_specs reproduces the fp8 fixture's names, dtypes and shapes")
    bf = demo_config.checkpoint_bytes(names)
    q8 = demo_config.checkpoint_bytes(demo_config.tensor_specs(cfg, quantized=True))
    params = demo_config.param_count(cfg)
    print(f"     demo config: {params / 1e6:.2f} M parameters, BF16 export {bf / 1e6:.2f} MB, FP8/FP4 export {q8 / 1e6:.2f} MB")
    check(5e6 <= params <= 15e6, "parameter count in 5-15 M")
    check(bf <= 25e6, "BF16 export <= 25 MB")
    check(q8 + 400e3 <= 12e6, "FP8/FP4 export + tokenizer/config/card <= 12 MB")

    print("FAILED: %d" % len(failures) if failures else "all format checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
