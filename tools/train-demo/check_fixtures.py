"""Proof that v4model.py (exact=True) is the model Strata serves: runs the bundled fixtures' sequences through it
and compares with the official reference's outputs stored in expected.safetensors.

For models/dsv4-tiny-stable (the tight oracle) every sequence must meet the project's criteria (models/README.md):
median row error <= 0.03, 90th percentile <= 0.05, >= 93% rows <= 0.10, argmax agreement >= 92%, row 0 <= 0.05,
where row error = ||ours - ref|| / ||ref|| per logits row. Our pass is one full causal forward from position 0;
rows P-1 .. S-1 of it correspond to the expected rows 0 .. S-P (the reference's prefill of P tokens, then one-token
decode steps). Per-layer hidden states are compared twice: along the full forward, and with each block fed the
reference's own input (the previous block's stored output), which isolates a diverging layer.

models/dsv4-tiny-fp8 (FP8/FP4 weights, exercises the quantized evaluation path and a real indexer top-k) is checked
against its statistical criteria (median <= 0.26, argmax >= 50%); informative, it does not fail the run, and is
skipped with a message when the folder is absent.

Exit status 0 only if the stable fixture passes. Usage: python3 check_fixtures.py [repo root]
"""
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stio  # noqa: E402
import v4model  # noqa: E402


def row_errors(ours, ref):
    num = np.linalg.norm(ours - ref, axis=-1)
    den = np.maximum(np.linalg.norm(ref, axis=-1), 1e-30)
    return num / den


def load_model(folder, device):
    cfg = stio_json(os.path.join(folder, "config.json"))
    quant = "quantization_config" in cfg
    model = v4model.V4Model(cfg, exact=True, act_quant=quant)
    arrays = stio.dequantized_checkpoint(folder)
    extra = v4model.load_arrays(model, arrays)
    print("  %s: %d tensors loaded, %d ignored (%s)" % (os.path.basename(folder), len(model.state_dict()),
                                                      len(extra), "MTP block" if all(e.startswith("mtp.") for e in extra)
                                                      else extra[:3]))
    return model.to(device).eval(), cfg


def stio_json(path):
    with open(path) as f:
        return json.load(f)


def expected_arrays(folder):
    raw = stio.read_safetensors(os.path.join(folder, "expected.safetensors"))
    out = {}
    for k, (dt, a) in raw.items():
        out[k] = a.astype(np.int64) if dt in ("I64", "I32") else stio.to_float(dt, a)
    return out


def check(folder, device, strict):
    model, cfg = load_model(folder, device)
    exp = expected_arrays(folder)
    manifest = stio_json(os.path.join(folder, "manifest.json"))
    ok_all = True
    for seq in manifest["sequences"]:
        i, p, s = seq["index"], seq["prompt_len"], seq["total_len"]
        tokens = torch.from_numpy(exp["seq%d.tokens" % i][:s]).to(device).view(1, s)
        t0 = time.time()
        with torch.no_grad():
            logits, hidden = model(tokens, return_hidden=True)
        ours = logits[0, p - 1:s].double().cpu().numpy()
        ref = exp["seq%d.logits" % i].astype(np.float64)
        err = row_errors(ours, ref)
        med, p90 = float(np.median(err)), float(np.percentile(err, 90))
        le10 = float((err <= 0.10).mean())
        arg = float((ours.argmax(-1) == ref.argmax(-1)).mean())
        if strict:
            ok = med <= 0.03 and p90 <= 0.05 and le10 >= 0.93 and arg >= 0.92 and err[0] <= 0.05
            crit = "median<=0.03 p90<=0.05 rows<=0.10>=93% argmax>=92% row0<=0.05"
        else:
            ok = med <= 0.26 and arg >= 0.50
            crit = "median<=0.26 argmax>=50%"
        ok_all &= ok
        print("  seq%d (P=%d, S=%d, %.1fs): median %.4f  p90 %.4f  rows<=0.10 %.1f%%  argmax %.1f%%  row0 %.4f  -> %s [%s]"
              % (i, p, s, time.time() - t0, med, p90, 100 * le10, 100 * arg, err[0], "PASS" if ok else "FAIL", crit))
        # per-layer hidden states (4 HC streams x hidden, flattened per position)
        first_bad = None
        h_in = model.embed_streams(tokens)
        for k, h in enumerate(hidden):
            key = "seq%d.all.layer%d.hidden" % (i, k)
            if key not in exp:
                break
            ref_h = exp[key].reshape(s, -1).astype(np.float64)
            e_full = row_errors(h[0].reshape(s, -1).double().cpu().numpy(), ref_h)
            with torch.no_grad():
                h_iso = model.layers[k](h_in, tokens)
            e_iso = row_errors(h_iso[0].reshape(s, -1).double().cpu().numpy(), ref_h)
            print("    layer %d (ratio %3d): full-forward median %.5f p99 %.5f | isolated median %.5f p99 %.5f"
                  % (k, cfg["compress_ratios"][k], np.median(e_full), np.percentile(e_full, 99),
                     np.median(e_iso), np.percentile(e_iso, 99)))
            if first_bad is None and (np.median(e_iso) > 0.01 or np.percentile(e_iso, 99) > 0.05):
                first_bad = k
            h_in = torch.from_numpy(exp[key].astype(np.float32)).to(device).view(1, s, *h.shape[2:])
        if first_bad is not None:
            print("    first layer whose output departs from the reference given the reference's input: %d" % first_bad)
    return ok_all


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.abspath(os.path.join(HERE, "..", ".."))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    v4model.exact_matmul_precision()
    torch.manual_seed(0)
    print("check_fixtures on %s (torch %s)" % (device, torch.__version__))
    ok = check(os.path.join(root, "models", "dsv4-tiny-stable"), device, strict=True)
    print("dsv4-tiny-stable: %s" % ("PASS" if ok else "FAIL"))
    fp8 = os.path.join(root, "models", "dsv4-tiny-fp8")
    if not os.path.isfile(os.path.join(fp8, "expected.safetensors")):
        print("dsv4-tiny-fp8 (informative): skipped, %s is absent" % fp8)
        return 0 if ok else 1
    try:
        ok8 = check(fp8, device, strict=False)
        print("dsv4-tiny-fp8 (informative): %s" % ("PASS" if ok8 else "FAIL"))
    except Exception as e:  # informative only
        print("dsv4-tiny-fp8 check crashed (informative only): %r" % (e,))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
