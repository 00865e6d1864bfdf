package io.strata.kv;

/** Storage of the shared main K=V entries (C4A, C128A and SWA caches). */
public enum MainKvDtype {
    /** 512 x bf16 = 1,024 B per entry. */
    BF16,
    /**
     * FlashMLA "MODEL1" layout: 448 e4m3 NoPE values + 64 bf16 RoPE values + 7 ue8m0 scales (one per 64
     * NoPE values) + 1 pad = 584 B; pages are laid out {@code [n*576 data | n*8 scales]}. Lossless against
     * the reference, which already rounds the NoPE part to e4m3 with power-of-two scales.
     */
    FP8;

    public static MainKvDtype parse(String text) {
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "bf16", "bfloat16" -> BF16;
            case "fp8", "fp8_e4m3", "e4m3" -> FP8;
            default -> throw new IllegalArgumentException("unknown main KV dtype '" + text + "' (expected bf16 or fp8)");
        };
    }
}
