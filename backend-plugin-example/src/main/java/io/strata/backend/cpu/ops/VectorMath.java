package io.strata.backend.cpu.ops;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/** Small fp32 kernels on the JDK Vector API; tails fall back to scalar loops. */
public final class VectorMath {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private VectorMath() {
    }

    /** Σ a[i]·b[i] over n elements, fp32 lanes. */
    public static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        int i = 0;
        FloatVector acc = FloatVector.zero(F);
        int upper = F.loopBound(n);
        for (; i < upper; i += F.length()) {
            acc = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc);
        }
        float s = sumLanes(acc);
        for (; i < n; i++) {
            s += a[aOff + i] * b[bOff + i];
        }
        return s;
    }

    /**
     * Adds the lanes in a fixed order. {@code reduceLanes(ADD)} may associate differently once the JIT
     * intrinsifies it, which would make the same forward pass give different bf16 roundings from one call
     * to the next.
     */
    static float sumLanes(FloatVector v) {
        float s = 0f;
        for (int l = 0; l < v.length(); l++) {
            s += v.lane(l);
        }
        return s;
    }

    /** Σ x[i]². */
    public static float sumSquares(float[] x, int off, int n) {
        return dot(x, off, x, off, n);
    }

    /** y[i] += a · x[i]. */
    public static void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        int upper = F.loopBound(n);
        FloatVector va = FloatVector.broadcast(F, a);
        for (; i < upper; i += F.length()) {
            FloatVector.fromArray(F, x, xOff + i).fma(va, FloatVector.fromArray(F, y, yOff + i))
                .intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += a * x[xOff + i];
        }
    }
}
