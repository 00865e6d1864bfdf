package io.strata.model.config;

/**
 * Precomputed rotations of one {@link RopeConfig} for positions {@code 0 .. positions-1}, built the way the
 * reference builds {@code freqs_cis}: angle = float32(position · inverseFrequency), then float32 cos/sin.
 * Rotation works on interleaved pairs (x[2i], x[2i+1]) of the rotated slice, which is the LAST
 * {@code dim} channels of a head; callers round the result to bf16 where the reference does.
 */
public final class RopeTable {

    private final RopeConfig rope;
    private final int positions;
    private final int pairs;
    private final float[] cos;
    private final float[] sin;

    private RopeTable(RopeConfig rope, int positions) {
        this.rope = rope;
        this.positions = positions;
        this.pairs = rope.dim() / 2;
        this.cos = new float[Math.multiplyExact(positions, pairs)];
        this.sin = new float[cos.length];
        float[] freqs = rope.inverseFrequencies();
        for (int p = 0; p < positions; p++) {
            for (int i = 0; i < pairs; i++) {
                float angle = RopeConfig.angle(freqs, p, i);
                cos[p * pairs + i] = (float) Math.cos(angle);
                sin[p * pairs + i] = (float) Math.sin(angle);
            }
        }
    }

    /** Builds the table for {@code positions} positions ({@code positions · dim/2 · 8} bytes of heap). */
    public static RopeTable build(RopeConfig rope, int positions) {
        if (positions <= 0) {
            throw new IllegalArgumentException("positions must be > 0, got " + positions);
        }
        return new RopeTable(rope, positions);
    }

    public RopeConfig rope() {
        return rope;
    }

    public int positions() {
        return positions;
    }

    public float cos(int position, int pair) {
        return cos[position * pairs + pair];
    }

    public float sin(int position, int pair) {
        return sin[position * pairs + pair];
    }

    /**
     * Rotates {@code x[off, off+dim)} in place by the angle of {@code position} (complex multiply by
     * e^{iθ}), or by its conjugate when {@code inverse} — the reference's de-rotation of attention outputs.
     */
    public void rotate(float[] x, int off, int position, boolean inverse) {
        int base = position * pairs;
        for (int i = 0; i < pairs; i++) {
            float c = cos[base + i];
            float s = inverse ? -sin[base + i] : sin[base + i];
            float re = x[off + 2 * i];
            float im = x[off + 2 * i + 1];
            x[off + 2 * i] = re * c - im * s;
            x[off + 2 * i + 1] = re * s + im * c;
        }
    }
}
