package io.strata.backend.cpu.model;

import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Fp4Linear;
import io.strata.backend.cpu.ops.Fp8Linear;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.backend.cpu.weights.TensorView;

/** Builds the right {@link Linear} for a checkpoint weight from its stored dtype. */
final class Linears {
    private Linears() {
    }

    /** A linear whose output is bf16, as the reference's default-dtype {@code Linear}. */
    static Linear bf16Out(TensorSource src, String prefix, int out, int in) {
        return build(src, prefix, out, in, true);
    }

    /** {@code wo_a}: FP8 in the file but dequantized by the converter and used without activation quantization. */
    static Linear dequantized(TensorSource src, String prefix, int out, int in) {
        return build(src, prefix, out, in, false);
    }

    private static Linear build(TensorSource src, String prefix, int out, int in, boolean quantizeInput) {
        TensorView w = src.tensor(prefix + ".weight");
        return switch (w.dtype()) {
            case "BF16" -> new DenseLinear(w.require("BF16", out, in).data(), true, out, in, true);
            case "F8_E4M3" -> {
                TensorView s = src.tensor(prefix + ".scale").require("F8_E8M0", (out + 127) / 128, (in + 127) / 128);
                yield new Fp8Linear(w.require("F8_E4M3", out, in).data(), s.data(), out, in, quantizeInput);
            }
            case "I8" -> {
                TensorView s = src.tensor(prefix + ".scale").require("F8_E8M0", out, in / 32);
                yield new Fp4Linear(w.require("I8", out, in / 2).data(), s.data(), out, in);
            }
            default -> throw new IllegalArgumentException("tensor " + w.name() + ": unsupported linear dtype " + w.dtype());
        };
    }

    /** An fp32 linear over bf16 checkpoint weights (compressor, router, head): no output rounding. */
    static DenseLinear fp32(TensorSource src, String name, int out, int in) {
        TensorView w = src.tensor(name);
        return switch (w.dtype()) {
            case "BF16" -> new DenseLinear(w.require("BF16", out, in).data(), true, out, in, false);
            case "F32" -> new DenseLinear(w.require("F32", out, in).data(), false, out, in, false);
            default -> throw new IllegalArgumentException("tensor " + name + ": expected BF16 or F32, found " + w.dtype());
        };
    }

    static float[] floats(TensorSource src, String name, int n) {
        TensorView t = src.tensor(name);
        if (t.elements() != n) {
            throw new IllegalArgumentException("tensor " + name + ": expected " + n + " values, found " + t.elements());
        }
        return t.toFloats();
    }
}
