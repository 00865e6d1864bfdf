package io.strata.model.config;

/** How the routed experts' weights are stored on disk ({@code expert_dtype}). */
public enum ExpertDtype {
    /** FP4 e2m1, two per byte in an I8 tensor, with a ue8m0 scale per 32 input channels. */
    FP4("fp4"),
    /** FP8 e4m3 with 128x128 ue8m0 block scales, like the other linears. */
    FP8("fp8"),
    /** Plain BF16 (an unquantized checkpoint). */
    BF16("bf16");

    private final String jsonName;

    ExpertDtype(String jsonName) {
        this.jsonName = jsonName;
    }

    public String jsonName() {
        return jsonName;
    }
}
