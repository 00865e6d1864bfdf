"""Numpy-only checkpoint I/O for the demo pipeline (no torch needed, so it is testable anywhere).

* safetensors reading and writing (header JSON + raw little-endian data);
* the number formats of a DeepSeek-V4 checkpoint: BF16 (round to nearest even), FP8 e4m3fn with ue8m0
  (power-of-two) scales per 128x128 block, FP4 e2m1 packed two per byte (element 2i in the low nibble)
  with one ue8m0 scale per row and 32 inputs;
* the activation round trips the inference code applies (FP8 per block of 64/128, FP4 per block of 32),
  as reference implementations for the torch versions in v4model.py.
"""
import json
import os
import struct

import numpy as np

# ----------------------------------------------------------------------------------------------------------
# scalar formats

FP8_MAX = 448.0
FP4_MAX = 6.0
FP4_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)


def bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round to nearest even (NaN stays NaN)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (b >> 16) & 1
    r = ((b + np.uint32(0x7FFF) + lsb) >> 16).astype(np.uint16)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    if nan.any():
        r = np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), r)
    return r


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_round(x):
    return bf16_to_f32(bf16_bits(x))


def _fp8_table():
    t = np.zeros(256, dtype=np.float32)
    for c in range(256):
        s = -1.0 if c & 0x80 else 1.0
        e = (c >> 3) & 0xF
        m = c & 0x7
        if e == 0xF and m == 0x7:
            t[c] = np.nan
        elif e == 0:
            t[c] = s * m / 8.0 * 2.0 ** -6
        else:
            t[c] = s * (1 + m / 8.0) * 2.0 ** (e - 7)
    return t


FP8_TABLE = _fp8_table()
FP4_TABLE = np.concatenate([FP4_GRID, -FP4_GRID]).astype(np.float32)


def e4m3_encode(y):
    """float32 values (|y| <= 448 expected; larger saturate to 448) -> uint8 e4m3fn codes, round to nearest even."""
    y = np.asarray(y, dtype=np.float32)
    sign = np.where(np.signbit(y), 0x80, 0).astype(np.uint8)
    a = np.minimum(np.abs(y), FP8_MAX).astype(np.float64)
    code = np.zeros(a.shape, dtype=np.int64)
    sub = a < 2.0 ** -6
    # subnormal range: units of 2^-9 (q == 8 is the smallest normal, whose code is also 8)
    code[sub] = np.round(a[sub] / 2.0 ** -9).astype(np.int64)
    n = ~sub
    if n.any():
        an = a[n]
        _, ex = np.frexp(an)            # an = m * 2^ex, m in [0.5, 1)
        e = ex - 1                       # an in [2^e, 2^(e+1))
        q = np.round(an / np.exp2(e - 3)).astype(np.int64)   # in [8, 16]
        up = q == 16
        e = np.where(up, e + 1, e)
        q = np.where(up, 8, q)
        code[n] = ((e + 7) << 3) | (q - 8)
    return (code.astype(np.uint8) | sign).astype(np.uint8)


def e2m1_round(y):
    """float32 -> nearest e2m1 value (ties to even), saturating at +-6."""
    y = np.asarray(y, dtype=np.float32)
    a = np.abs(y)
    r = np.where(a < 2, np.round(a * 2) * 0.5, np.where(a < 4, np.round(a), np.minimum(np.round(a * 0.5) * 2, 6.0)))
    return np.copysign(r.astype(np.float32), y)


def e2m1_encode(y):
    r = e2m1_round(y)
    a = np.abs(r)
    idx = np.searchsorted(FP4_GRID, a)  # exact grid values
    return (idx | np.where(np.signbit(r), 8, 0)).astype(np.uint8)


def pow2_ceil(v):
    """Smallest power of two >= v (v > 0, normal float32): exponent, plus one if any mantissa bit is set."""
    b = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32)
    e = ((b >> 23) & 0xFF).astype(np.int64) - 127 + ((b & 0x7FFFFF) != 0)
    return ((e + 127).astype(np.uint32) << 23).view(np.float32)


def e8m0_encode(pow2):
    b = np.ascontiguousarray(pow2, dtype=np.float32).view(np.uint32)
    return ((b >> 23) & 0xFF).astype(np.uint8)


def e8m0_decode(codes):
    return np.exp2(np.asarray(codes, dtype=np.float64) - 127).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------
# activation round trips (what the reference writes back in place)

def fp8_roundtrip(x, block):
    x = np.asarray(x, dtype=np.float32)
    xb = x.reshape(*x.shape[:-1], x.shape[-1] // block, block)
    amax = np.maximum(np.abs(xb).max(-1, keepdims=True), np.float32(1e-4))
    s = pow2_ceil((amax / np.float32(FP8_MAX)).astype(np.float32))
    q = FP8_TABLE[e4m3_encode(xb / s)]
    return (q * s).reshape(x.shape).astype(np.float32)


def fp4_roundtrip(x, block):
    x = np.asarray(x, dtype=np.float32)
    xb = x.reshape(*x.shape[:-1], x.shape[-1] // block, block)
    amax = np.maximum(np.abs(xb).max(-1, keepdims=True), np.float32(6.0 * 2.0 ** -126))
    s = pow2_ceil((amax / np.float32(FP4_MAX)).astype(np.float32))
    return (e2m1_round(xb / s) * s).reshape(x.shape).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------
# weight formats

def fp8_weight_decode(codes, scale_codes):
    """codes uint8 [out, in], scale codes uint8 [ceil(out/128), ceil(in/128)] -> float32 [out, in]."""
    codes = np.asarray(codes).view(np.uint8)
    out, inn = codes.shape
    s = e8m0_decode(np.asarray(scale_codes).view(np.uint8))
    s_full = np.repeat(np.repeat(s, 128, axis=0), 128, axis=1)[:out, :inn]
    return FP8_TABLE[codes] * s_full


def fp8_weight_encode(w, scale_codes=None):
    """float32 [out, in] -> (uint8 codes, uint8 ue8m0 scale codes [ceil(out/128), ceil(in/128)]).
    With scale_codes given, only the codes are computed (for bit-exact re-encoding tests)."""
    w = np.asarray(w, dtype=np.float32)
    out, inn = w.shape
    bo, bi = -(-out // 128), -(-inn // 128)
    if scale_codes is None:
        pad = np.zeros((bo * 128, bi * 128), dtype=np.float32)
        pad[:out, :inn] = np.abs(w)
        amax = pad.reshape(bo, 128, bi, 128).max(axis=(1, 3))
        amax = np.maximum(amax, np.float32(FP8_MAX * 2.0 ** -126))
        scale_codes = e8m0_encode(pow2_ceil((amax / np.float32(FP8_MAX)).astype(np.float32)))
    scale_codes = np.asarray(scale_codes).view(np.uint8)
    s = e8m0_decode(scale_codes)
    s_full = np.repeat(np.repeat(s, 128, axis=0), 128, axis=1)[:out, :inn]
    return e4m3_encode(w / s_full), scale_codes


def fp4_weight_decode(packed, scale_codes):
    """packed int8/uint8 [out, in/2] (low nibble = even element), scales uint8 [out, in/32] -> float32 [out, in]."""
    p = np.asarray(packed).view(np.uint8)
    out = p.shape[0]
    vals = np.empty((out, p.shape[1] * 2), dtype=np.float32)
    vals[:, 0::2] = FP4_TABLE[p & 0xF]
    vals[:, 1::2] = FP4_TABLE[p >> 4]
    s = e8m0_decode(np.asarray(scale_codes).view(np.uint8))
    return vals * np.repeat(s, 32, axis=1)


def fp4_weight_encode(w, scale_codes=None):
    """float32 [out, in] -> (int8 packed [out, in/2], uint8 scale codes [out, in/32])."""
    w = np.asarray(w, dtype=np.float32)
    out, inn = w.shape
    if scale_codes is None:
        amax = np.abs(w).reshape(out, inn // 32, 32).max(-1)
        amax = np.maximum(amax, np.float32(FP4_MAX * 2.0 ** -126))
        scale_codes = e8m0_encode(pow2_ceil((amax / np.float32(FP4_MAX)).astype(np.float32)))
    scale_codes = np.asarray(scale_codes).view(np.uint8)
    s = np.repeat(e8m0_decode(scale_codes), 32, axis=1)
    c = e2m1_encode(w / s)
    packed = (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)
    return packed.view(np.int8), scale_codes


# ----------------------------------------------------------------------------------------------------------
# safetensors

_NP = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32, "I8": np.int8, "U8": np.uint8,
       "BF16": np.uint16, "F16": np.float16, "F8_E4M3": np.uint8, "F8_E8M0": np.uint8}


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n)), 8 + n


def read_safetensors(path):
    """-> {name: (dtype string, raw numpy array in its storage type)} (BF16 as uint16, FP8 as uint8)."""
    header, base = read_header(path)
    data = np.fromfile(path, dtype=np.uint8)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        arr = data[base + a:base + b].view(_NP[info["dtype"]]).reshape(info["shape"])
        out[name] = (info["dtype"], arr)
    return out


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: (dtype string, numpy array whose itemsize matches the dtype)}; names sorted."""
    header = {"__metadata__": metadata or {"format": "pt"}}
    off = 0
    names = sorted(tensors)
    for name in names:
        dt, arr = tensors[name]
        if np.dtype(_NP[dt]).itemsize != arr.dtype.itemsize:
            raise ValueError(f"{name}: {dt} needs itemsize {np.dtype(_NP[dt]).itemsize}, got {arr.dtype}")
        nbytes = arr.nbytes
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + nbytes]}
        off += nbytes
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for name in names:
            f.write(np.ascontiguousarray(tensors[name][1]).tobytes())
    return off


def read_checkpoint(folder):
    """All tensors of a model folder (sharded through model.safetensors.index.json, or one model.safetensors)."""
    idx = os.path.join(folder, "model.safetensors.index.json")
    if os.path.isfile(idx):
        with open(idx) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
    else:
        shards = ["model.safetensors"]
    out = {}
    for s in shards:
        out.update(read_safetensors(os.path.join(folder, s)))
    return out


def write_checkpoint(folder, tensors, n_shards=2):
    """Writes model-0000k-of-0000n.safetensors shards (split by bytes, names sorted) and the index."""
    os.makedirs(folder, exist_ok=True)
    names = sorted(tensors)
    total = sum(tensors[n][1].nbytes for n in names)
    groups, cur, acc = [], [], 0
    for n in names:
        cur.append(n)
        acc += tensors[n][1].nbytes
        if acc >= total * (len(groups) + 1) / n_shards and len(groups) < n_shards - 1:
            groups.append(cur)
            cur = []
    groups.append(cur)
    groups = [g for g in groups if g]
    weight_map = {}
    for i, g in enumerate(groups):
        fname = "model-%05d-of-%05d.safetensors" % (i + 1, len(groups))
        write_safetensors(os.path.join(folder, fname), {n: tensors[n] for n in g})
        for n in g:
            weight_map[n] = fname
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=1)
    return total


def to_float(dtype, arr, scale=None):
    """Decodes one stored tensor to float32 (FP8/FP4 need their scale codes)."""
    if dtype == "BF16":
        return bf16_to_f32(arr)
    if dtype in ("F32", "F64", "F16"):
        return arr.astype(np.float32)
    if dtype == "F8_E4M3":
        return fp8_weight_decode(arr, scale)
    if dtype == "I8":
        return fp4_weight_decode(arr, scale)
    raise ValueError("cannot decode " + dtype + " as float")


def dequantized_checkpoint(folder):
    """{name: numpy array}: weights decoded to float32 (FP8/FP4 with their .scale folded in, the .scale
    entries dropped), integer tensors (tid2eid) as int64."""
    raw = read_checkpoint(folder)
    out = {}
    for name, (dt, arr) in raw.items():
        if name.endswith(".scale"):
            continue
        if dt in ("I64", "I32"):
            out[name] = arr.astype(np.int64)
        elif dt in ("F8_E4M3", "I8"):
            out[name] = to_float(dt, arr, raw[name[:-len(".weight")] + ".scale"][1])
        else:
            out[name] = to_float(dt, arr)
    return out
