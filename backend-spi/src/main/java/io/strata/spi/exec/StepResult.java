package io.strata.spi.exec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Logits of one step: the requested rows of every chunk, in batch order, each {@code vocab} fp32 values.
 *
 * <p>The logits are a view, not a copy: a device backend hands out the page-locked host buffer its device
 * wrote them into, so a step of 64 rows over a 129k vocabulary does not allocate and fill a 33 MB array.
 * The view belongs to the executor: it stays valid until that executor's next {@link ModelExecutor#execute}
 * or {@link ModelExecutor#close}, so read (or copy) what you need before calling it again.
 *
 * @param logits    {@code rows × vocab} fp32 values in native byte order, row-major
 * @param vocab     vocabulary size
 * @param rowStart  per chunk, index of its first row ({@code rowStart[i+1] - rowStart[i]} rows)
 * @param nanos     wall time the backend spent on the step
 */
public record StepResult(MemorySegment logits, int vocab, int[] rowStart, long nanos) {
    /** fp32 in native order; a heap {@code float[]} segment is 4-byte aligned, so the layout may require it. */
    public static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT;

    public StepResult {
        if (vocab <= 0 || logits.byteSize() % (4L * vocab) != 0) {
            throw new IllegalArgumentException("logits of " + logits.byteSize() + " bytes are not rows of " + vocab
                + " floats");
        }
    }

    /** A result over a heap array (host backends). */
    public static StepResult of(float[] logits, int vocab, int[] rowStart, long nanos) {
        return new StepResult(MemorySegment.ofArray(logits), vocab, rowStart, nanos);
    }

    /** Rows of logits the step returned. */
    public int rows() {
        return (int) (logits.byteSize() / (4L * vocab));
    }

    /** Logit of {@code token} in row {@code row} (a row index over the whole step). */
    public float logit(int row, int token) {
        return logits.getAtIndex(FLOAT, (long) row * vocab + token);
    }

    /** Copies the logits of chunk {@code chunk}'s {@code row}-th requested row. */
    public float[] row(int chunk, int row) {
        float[] out = new float[vocab];
        MemorySegment.copy(logits, FLOAT, 4L * (rowStart[chunk] + row) * vocab, out, 0, vocab);
        return out;
    }
}
