package io.strata.model.config;

import java.util.Optional;

/**
 * Rotary embedding parameters of one layer. Rotation is applied to the LAST {@code dim} channels of a
 * head, on interleaved pairs (2i, 2i+1).
 *
 * @param theta base θ (10000 for window-only layers, {@code compress_rope_theta} for compressed ones)
 * @param dim   rotated channels ({@code qk_rope_head_dim}, 64)
 * @param yarn  YaRN interpolation, present only on compressed layers
 */
public record RopeConfig(double theta, int dim, Optional<YarnScaling> yarn) {

    public RopeConfig {
        if (dim <= 0 || dim % 2 != 0) {
            throw new IllegalArgumentException("rope dim must be positive and even, got " + dim);
        }
        if (!(theta > 1)) {
            throw new IllegalArgumentException("rope theta must be > 1, got " + theta);
        }
    }

    /**
     * Angular frequency of each rotated pair, in float32 the way the reference's
     * {@code precompute_freqs_cis} builds it: {@code 1 / theta^(2i/dim)}, then, with YaRN, a linear ramp
     * between the pairs that make {@code beta_fast} and {@code beta_slow} full turns over the original
     * context: pairs below the ramp keep their frequency, pairs above it are divided by the factor.
     */
    public float[] inverseFrequencies() {
        int pairs = dim / 2;
        float[] freqs = new float[pairs];
        for (int i = 0; i < pairs; i++) {
            float exponent = (float) (2 * i) / (float) dim;
            freqs[i] = 1.0f / (float) Math.pow(theta, exponent);
        }
        if (yarn.isEmpty()) {
            return freqs;
        }
        YarnScaling y = yarn.get();
        int[] range = yarnCorrectionRange();
        float low = range[0];
        float high = range[1];
        if (low == high) {
            high += 0.001f;
        }
        float factor = (float) y.factor();
        for (int i = 0; i < pairs; i++) {
            float ramp = Math.clamp((i - low) / (high - low), 0f, 1f);
            float smooth = 1f - ramp;
            freqs[i] = freqs[i] / factor * (1f - smooth) + freqs[i] * smooth;
        }
        return freqs;
    }

    /**
     * The YaRN ramp bounds {low, high} (pair indices): low = floor(d(β_fast)), high = ceil(d(β_slow)),
     * d(n) = dim·ln(L / (2πn)) / (2 ln θ), clamped to [0, dim-1]. For θ = 160000, dim 64, L = 65536 this is {15, 25}.
     */
    public int[] yarnCorrectionRange() {
        YarnScaling y = yarn.orElseThrow(() -> new IllegalStateException("no YaRN on this layer"));
        int low = (int) Math.floor(correctionDim(y.betaFast(), y.originalMaxPositionEmbeddings()));
        int high = (int) Math.ceil(correctionDim(y.betaSlow(), y.originalMaxPositionEmbeddings()));
        return new int[] {Math.max(low, 0), Math.min(high, dim - 1)};
    }

    private double correctionDim(double rotations, int originalContext) {
        return dim * Math.log(originalContext / (rotations * 2 * Math.PI)) / (2 * Math.log(theta));
    }

    /** The rotation angle of pair {@code pair} at position {@code position}, rounded as a float32 outer product. */
    public static float angle(float[] inverseFrequencies, long position, int pair) {
        return (float) position * inverseFrequencies[pair];
    }
}
