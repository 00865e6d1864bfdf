package io.strata.backend.cpu.ops;

import io.strata.model.format.Bf16;
/** Walsh–Hadamard transform in Sylvester (natural) order, fp32, as the indexer's rotation uses it. */
public final class Hadamard {
    private Hadamard() {
    }

    /**
     * {@code x[off..off+n) ← bf16(H_n · x · scale)}; n must be a power of two. The butterfly gives
     * the same product as the explicit symmetric matrix, only the fp32 summation order differs.
     */
    public static void transform(float[] x, int off, int n, float scale) {
        if (Integer.bitCount(n) != 1) {
            throw new IllegalArgumentException("Hadamard size must be a power of two: " + n);
        }
        for (int h = 1; h < n; h <<= 1) {
            for (int i = 0; i < n; i += h << 1) {
                for (int j = i; j < i + h; j++) {
                    float a = x[off + j];
                    float b = x[off + j + h];
                    x[off + j] = a + b;
                    x[off + j + h] = a - b;
                }
            }
        }
        for (int i = off; i < off + n; i++) {
            x[i] = Bf16.round(x[i] * scale);
        }
    }
}
