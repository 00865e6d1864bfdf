package io.strata.kv;

/**
 * The retention rule of a window kind. Before computing position {@code c} (that is, with {@code c}
 * positions already computed) the kind must still hold positions {@code [windowStart(c), c)}.
 *
 * <p>SWA: stride 1, {@code blocks = sliding_window}, so {@code windowStart(c) = c - 127}: the query at
 * {@code c} sees the 127 previous raw keys plus its own. Compressor states: stride = ratio, blocks =
 * coff, so the open entry's positions (and for ratio 4 the previous block's) are kept, aligned to the
 * ratio; the C128 state is empty at every multiple of 128.
 *
 * @param stride alignment of the window start, in native positions
 * @param blocks how many strides the window spans
 */
public record WindowRule(int stride, int blocks) {

    public WindowRule {
        if (stride <= 0 || blocks <= 0) {
            throw new IllegalArgumentException("window stride and blocks must be positive: " + stride + ", " + blocks);
        }
    }

    /** Window length in native positions. */
    public int size() {
        return stride * blocks;
    }

    /** First position still needed when {@code computed} positions are done. */
    public long windowStart(long computed) {
        long start = stride * (computed / stride - (blocks - 1));
        return Math.max(0, start);
    }
}
