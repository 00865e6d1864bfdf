package io.strata.model.checkpoint;

/** The safetensors dtypes a DeepSeek-V4 checkpoint uses, with their on-disk element width. */
public enum DType {
    /** FP8 e4m3fn weights. */
    F8_E4M3(1),
    /** UE8M0 power-of-two scales. */
    F8_E8M0(1),
    /** Signed bytes; in V4 the routed experts' packed FP4 e2m1 pairs (low nibble = even element). */
    I8(1),
    U8(1),
    BF16(2),
    F16(2),
    F32(4),
    I32(4),
    I64(8),
    F64(8);

    private final int byteSize;

    DType(int byteSize) {
        this.byteSize = byteSize;
    }

    public int byteSize() {
        return byteSize;
    }

    public boolean isFloatingPoint() {
        return this == F8_E4M3 || this == F8_E8M0 || this == BF16 || this == F16 || this == F32 || this == F64;
    }

    /** The dtype for a safetensors header name, or {@code null} if unsupported. */
    public static DType fromHeaderName(String name) {
        for (DType d : values()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }
}
