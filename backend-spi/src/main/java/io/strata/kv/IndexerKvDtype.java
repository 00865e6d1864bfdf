package io.strata.kv;

/** Storage of the Lightning-indexer keys of C4A layers. */
public enum IndexerKvDtype {
    /** 128 x bf16 = 256 B per entry. */
    BF16,
    /** 128 e4m3 + one fp32 scale = 132 B per entry, page {@code [n*128 | n*4]}. */
    FP8,
    /**
     * MXFP4: 128 e2m1 values (64 B) + one ue8m0 scale per 32 values (4 B) = 68 B per entry, page
     * {@code [n*64 | n*4]}. Lossless against the reference, which simulates FP4 on the indexer keys.
     */
    FP4;

    public static IndexerKvDtype parse(String text) {
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "bf16", "bfloat16" -> BF16;
            case "fp8", "fp8_e4m3", "e4m3" -> FP8;
            case "fp4", "mxfp4", "e2m1" -> FP4;
            default -> throw new IllegalArgumentException("unknown indexer KV dtype '" + text + "' (expected bf16, fp8 or fp4)");
        };
    }
}
