package io.strata.backend.cpu.bench;

import java.util.Arrays;

/**
 * Row-wise comparison of logits against a reference (the fixtures README's metrics: row error
 * {@code ||ours - ref|| / ||ref||}, argmax agreement) and the project's acceptance criteria; shared by the CPU
 * backend's parity tests and every other backend's parity against the CPU.
 */
public record LogitStats(int rows, double median, double p90, double fracBelow010, double argmaxAgreement, double row0) {

    public static LogitStats of(float[] ours, float[] ref, int rows, int vocab) {
        double[] err = new double[rows];
        int agree = 0;
        for (int r = 0; r < rows; r++) {
            double num = 0;
            double den = 0;
            int am = 0;
            int bm = 0;
            for (int v = 0; v < vocab; v++) {
                double a = ours[r * vocab + v];
                double b = ref[r * vocab + v];
                num += (a - b) * (a - b);
                den += b * b;
                if (a > ours[r * vocab + am]) {
                    am = v;
                }
                if (b > ref[r * vocab + bm]) {
                    bm = v;
                }
            }
            err[r] = Math.sqrt(num / den);
            if (am == bm) {
                agree++;
            }
        }
        double row0 = err[0];
        double[] sorted = err.clone();
        Arrays.sort(sorted);
        long below = Arrays.stream(err).filter(e -> e <= 0.10).count();
        return new LogitStats(rows, sorted[rows / 2], sorted[(int) Math.floor(0.9 * (rows - 1))],
            (double) below / rows, (double) agree / rows, row0);
    }

    /** All rows of {@code ref} ({@code ref.length / vocab}). */
    public static LogitStats of(float[] ours, float[] ref, int vocab) {
        return of(ours, ref, ref.length / vocab, vocab);
    }

    /** The dsv4-tiny-stable acceptance criteria. */
    public boolean meetsStableCriteria() {
        return median <= 0.03 && p90 <= 0.05 && fracBelow010 >= 0.93 && argmaxAgreement >= 0.92 && row0 <= 0.05;
    }

    /**
     * The stable criteria for generated models: the README's row-error bounds, and argmax agreement of at least
     * 85% instead of 92%. The README calibrates argmax on the fixture; the logits of a random-weight model over
     * thousands of tokens are flat (the gap between the two largest is about the size of a 1.5% row error), so
     * two correct implementations disagree on about one row in ten there.
     */
    public boolean meetsGeneratedStableCriteria() {
        return median <= 0.03 && p90 <= 0.05 && fracBelow010 >= 0.93 && argmaxAgreement >= 0.85 && row0 <= 0.05;
    }

    /** The README's end-to-end criteria for dsv4-tiny-fp8 (twice the reference's own spread). */
    public boolean meetsFp8Criteria() {
        return median <= 0.26 && argmaxAgreement >= 0.50;
    }

    @Override
    public String toString() {
        return String.format("rows=%d median=%.4f p90=%.4f rows<=0.10=%.1f%% argmax=%.1f%% row0=%.4f",
            rows, median, p90, 100 * fracBelow010, 100 * argmaxAgreement, row0);
    }
}
