package io.strata.backend.cpu.ops;

/**
 * {@code y = x · Wᵀ} for a batch of rows, with the reference's numerics for the weight's format
 * (FP8/FP4 weights quantize the activation per 128 channels first; bf16 linears round the output).
 */
public interface Linear {

    int inFeatures();

    int outFeatures();

    /** Bytes of weights (and scales) one full application reads: the decode-bandwidth numerator. */
    long weightBytes();

    /**
     * @param x    {@code rows × inFeatures}, row-major from index 0; not modified
     * @param rows number of rows
     * @param y    receives {@code rows × outFeatures}
     */
    void forward(float[] x, int rows, float[] y);
}
