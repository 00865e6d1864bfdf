# Regenerate: pip install ml_dtypes && python3 generate-golden-ml-dtypes.py (writes golden-ml-dtypes.txt next to it)
# Golden codes from ml_dtypes (independent implementation of e4m3fn / e2m1fn / bfloat16 casts).
import numpy as np, ml_dtypes
rng = np.random.default_rng(20261129)
f32 = np.float32
def codes(x, dt):
    return np.asarray(x, dtype=f32).astype(dt).view(np.uint8)
lines = ["# format input_float32_bits code   (generated with ml_dtypes %s, numpy %s; inputs clamped as the reference clamps)" % (ml_dtypes.__version__, np.__version__)]
# e4m3
reps = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(f32)
fin = np.sort(np.unique(reps[np.isfinite(reps)]))
mids = (fin[:-1] + fin[1:]) / 2
xs = np.concatenate([fin, mids, np.nextafter(mids, f32(np.inf)), np.nextafter(mids, f32(-np.inf)),
                     (rng.standard_normal(3000) * np.exp2(rng.integers(-14, 9, 3000))).astype(f32),
                     rng.uniform(-448, 448, 1000).astype(f32)]).astype(f32)
xs = np.clip(xs, f32(-448), f32(448))
for x, c in zip(xs, codes(xs, ml_dtypes.float8_e4m3fn)):
    lines.append("e4m3 %08x %02x" % (np.asarray(x, f32).view(np.uint32), c))
# e2m1
reps4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6], dtype=f32)
mids4 = (reps4[:-1] + reps4[1:]) / 2
xs = np.concatenate([reps4, -reps4, mids4, -mids4, np.nextafter(mids4, f32(9)), np.nextafter(mids4, f32(-9)),
                     rng.uniform(-6, 6, 2000).astype(f32), (rng.standard_normal(500) * 0.3).astype(f32)]).astype(f32)
xs = np.clip(xs, f32(-6), f32(6))
for x, c in zip(xs, codes(xs, ml_dtypes.float4_e2m1fn)):
    lines.append("e2m1 %08x %x" % (np.asarray(x, f32).view(np.uint32), c & 0xF))
# bf16
bits = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)
ties = (rng.integers(0, 0x7F7F, 1000, dtype=np.uint32) << 16) | 0x8000
xs = np.concatenate([bits, ties, ties | 0x80000000]).view(f32)
xs = xs[np.isfinite(xs)]
for x, c in zip(xs, np.asarray(xs, f32).astype(ml_dtypes.bfloat16).view(np.uint16)):
    lines.append("bf16 %08x %04x" % (np.asarray(x, f32).view(np.uint32), c))
open(__import__("os").path.join(__import__("os").path.dirname(__file__), "golden-ml-dtypes.txt"), "w").write("\n".join(lines) + "\n")
print(len(lines))
