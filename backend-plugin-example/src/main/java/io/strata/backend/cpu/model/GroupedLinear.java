package io.strata.backend.cpu.model;

import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.Fp8Linear;
import io.strata.backend.cpu.ops.Linear;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.backend.cpu.weights.TensorView;

import java.lang.foreign.MemorySegment;

/**
 * {@code wo_a} is stored as one {@code [G·oLora, H·hd/G]} matrix but applied per group (each group's
 * rows see only its slice of the attention output); this cuts it into G independent linears, bf16
 * numerics (the converter dequantizes an FP8 {@code wo_a}; no activation quantization).
 */
final class GroupedLinear {
    private GroupedLinear() {
    }

    static Linear[] split(TensorSource src, String prefix, int groups, int oLora, int groupIn) {
        TensorView w = src.tensor(prefix + ".weight");
        int rows = groups * oLora;
        Linear[] out = new Linear[groups];
        switch (w.dtype()) {
            case "BF16" -> {
                w.require("BF16", rows, groupIn);
                for (int g = 0; g < groups; g++) {
                    MemorySegment part = w.data().asSlice((long) g * oLora * groupIn * 2, (long) oLora * groupIn * 2);
                    out[g] = new DenseLinear(part, true, oLora, groupIn, true);
                }
            }
            case "F8_E4M3" -> {
                if (oLora % 128 != 0) {
                    throw new IllegalArgumentException(prefix + ": o_lora_rank must be a multiple of 128 for FP8");
                }
                w.require("F8_E4M3", rows, groupIn);
                int sc = (groupIn + 127) / 128;
                TensorView s = src.tensor(prefix + ".scale").require("F8_E8M0", rows / 128, sc);
                for (int g = 0; g < groups; g++) {
                    MemorySegment part = w.data().asSlice((long) g * oLora * groupIn, (long) oLora * groupIn);
                    MemorySegment sp = s.data().asSlice((long) g * (oLora / 128) * sc, (long) (oLora / 128) * sc);
                    out[g] = new Fp8Linear(part, sp, oLora, groupIn, false);
                }
            }
            default -> throw new IllegalArgumentException("tensor " + w.name() + ": unsupported dtype " + w.dtype());
        }
        return out;
    }
}
