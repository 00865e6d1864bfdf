"""Writes trained weights as Strata reads them: the Hugging Face DeepSeek-V4 layout (no "model." prefix, two
safetensors shards + model.safetensors.index.json, config.json, tokenizer.json), in two formats:

* BF16 folder (models/dsv4-demo): linears, norms, embeddings, compressors BF16; hc_*, attn_sink, compressor
  ape, gate.bias F32; tid2eid I64 -- the dtypes of models/dsv4-tiny-stable;
* FP8/FP4 folder (models/dsv4-demo-fp8): config with expert_dtype fp4 and the quantization_config of
  models/dsv4-tiny-fp8; attention/indexer/shared-expert linears (wo_a included) FP8 e4m3 with one ue8m0 scale per
  128x128 block (scale = the smallest power of two >= block amax / 448), routed experts FP4 e2m1 packed two per
  I8 byte (low nibble = even element) with one ue8m0 scale per row and 32 inputs (>= amax / 6); everything else
  as in the BF16 folder.

The tensor list is demo_config.tensor_specs (the loader's catalogue); numpy only (stio.py), so the encoders are the
ones test_formats.py checks bit-exactly against the fixtures.
"""
import json
import os
import shutil

import numpy as np

import demo_config
import stio


def encode(arrays, cfg, quantized):
    """{name: float32/int64 numpy array} -> {name: (dtype, stored array)} following the catalogue."""
    specs = demo_config.tensor_specs(cfg, quantized=quantized)
    out = {}
    for name, (dt, shape) in specs.items():
        if name.endswith(".scale"):
            continue
        a = arrays[name]
        if dt == "F8_E4M3":
            codes, sc = stio.fp8_weight_encode(a.astype(np.float32))
            out[name] = ("F8_E4M3", codes)
            out[name[:-len(".weight")] + ".scale"] = ("F8_E8M0", sc)
        elif dt == "I8":
            packed, sc = stio.fp4_weight_encode(a.astype(np.float32))
            out[name] = ("I8", packed)
            out[name[:-len(".weight")] + ".scale"] = ("F8_E8M0", sc)
        elif dt == "BF16":
            out[name] = ("BF16", stio.bf16_bits(a.astype(np.float32)))
        elif dt == "F32":
            out[name] = ("F32", a.astype(np.float32))
        elif dt == "I64":
            out[name] = ("I64", a.astype(np.int64))
        else:
            raise ValueError(name + ": unexpected dtype " + dt)
    got = {k: (v[0], tuple(v[1].shape)) for k, v in out.items()}
    want = {k: (v[0], tuple(v[1])) for k, v in specs.items()}
    if got != want:
        diff = sorted(set(got.items()) ^ set(want.items()))[:5]
        raise ValueError("export does not match the catalogue: %s" % diff)
    return out


def write_folder(folder, arrays, cfg, quantized, tokenizer_json, extra_files=()):
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    config = demo_config.quantized_config(cfg) if quantized else dict(cfg)
    tensors = encode(arrays, cfg, quantized)
    stio.write_checkpoint(folder, tensors, n_shards=2)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    shutil.copyfile(tokenizer_json, os.path.join(folder, "tokenizer.json"))
    for p in extra_files:
        shutil.copyfile(p, os.path.join(folder, os.path.basename(p)))
    return folder_bytes(folder)


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def export_all(arrays, cfg, out_root, tokenizer_json, extra_files=()):
    """-> {"bf16": path, "fp8": path, sizes}: models/dsv4-demo and models/dsv4-demo-fp8 under out_root."""
    bf = os.path.join(out_root, "dsv4-demo")
    q8 = os.path.join(out_root, "dsv4-demo-fp8")
    sb = write_folder(bf, arrays, cfg, False, tokenizer_json, extra_files)
    sq = write_folder(q8, arrays, cfg, True, tokenizer_json, extra_files)
    print("export: %s %.2f MB, %s %.2f MB" % (bf, sb / 1e6, q8, sq / 1e6))
    return {"bf16": bf, "fp8": q8, "bf16_bytes": sb, "fp8_bytes": sq}


def model_arrays(model):
    """A torch model's state dict as numpy (float32 / int64), on the CPU."""
    out = {}
    for k, t in model.state_dict().items():
        t = t.detach().cpu()
        out[k] = t.numpy().astype(np.int64) if not t.is_floating_point() else t.float().numpy()
    return out


if __name__ == "__main__":
    # numpy-only smoke: re-export the stable fixture's trunk weights in both formats into a temp dir
    import sys
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", ".."))
    fx = os.path.join(root, "models", "dsv4-tiny-stable")
    cfg = demo_config.load_json(os.path.join(fx, "config.json"))
    cfg["num_nextn_predict_layers"] = 0
    cfg["compress_ratios"] = cfg["compress_ratios"][:cfg["num_hidden_layers"]]
    arr = {k: v for k, v in stio.dequantized_checkpoint(fx).items() if not k.startswith("mtp.")}
    with tempfile.TemporaryDirectory() as d:
        r = export_all(arr, cfg, d, os.path.join(fx, "tokenizer.json"))
        back = stio.dequantized_checkpoint(r["bf16"])
        assert all(np.array_equal(back[k], arr[k]) for k in arr), "BF16 export must reproduce BF16 weights exactly"
        q = stio.dequantized_checkpoint(r["fp8"])
        worst = max(float(np.abs(q[k] - arr[k]).max() / (np.abs(arr[k]).max() + 1e-30)) for k in arr)
        assert set(q) == set(arr) and worst < 0.2, worst
        print("export self-check passed (BF16 exact, FP8/FP4 worst block-relative error %.3f)" % worst)
    sys.exit(0)
