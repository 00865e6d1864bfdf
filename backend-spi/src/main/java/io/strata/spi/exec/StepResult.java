package io.strata.spi.exec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * What one step returns: per requested row (the requested rows of every chunk, in batch order) either its logits,
 * {@code vocab} fp32 values, or — for rows of a chunk marked {@link SequenceChunk#argmaxOnly()}, where the backend
 * chose to — only its argmax token.
 *
 * <p>The logits are a view, not a copy: a device backend hands out the page-locked host buffer its device
 * wrote them into, so a step of 64 rows over a 129k vocabulary does not allocate and fill a 33 MB array.
 * The view belongs to the executor: it stays valid until that executor's next {@link ModelExecutor#execute}
 * or {@link ModelExecutor#close}, so read (or copy) what you need before calling it again.
 *
 * @param logits    the rows whose {@code tokens} entry is -1, in row order, each {@code vocab} fp32 values in
 *                  native byte order
 * @param vocab     vocabulary size
 * @param rowStart  per chunk, index of its first row ({@code rowStart[i+1] - rowStart[i]} rows)
 * @param tokens    per row, its argmax token ({@link #argmax} over the row) when the backend returned that
 *                  instead of the row, else -1; a backend returns tokens only for rows of argmax-only chunks
 * @param nanos     wall time the backend spent on the step
 */
public record StepResult(MemorySegment logits, int vocab, int[] rowStart, int[] tokens, long nanos) {
    /** fp32 in native order; a heap {@code float[]} segment is 4-byte aligned, so the layout may require it. */
    public static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT;

    public StepResult {
        if (vocab <= 0) {
            throw new IllegalArgumentException("vocabulary of " + vocab);
        }
        long whole = Arrays.stream(tokens).filter(t -> t < 0).count();
        if (logits.byteSize() != whole * 4L * vocab) {
            throw new IllegalArgumentException("logits of " + logits.byteSize() + " bytes are not the " + whole
                + " rows of " + vocab + " floats the tokens leave to them");
        }
        for (int t : tokens) {
            if (t < -1 || t >= vocab) {
                throw new IllegalArgumentException("token " + t + " outside a vocabulary of " + vocab);
            }
        }
    }

    /** Every row as logits. */
    public StepResult(MemorySegment logits, int vocab, int[] rowStart, long nanos) {
        this(logits, vocab, rowStart, noTokens(logits.byteSize() / (4L * vocab)), nanos);
    }

    /** A result over a heap array, every row as logits (host backends). */
    public static StepResult of(float[] logits, int vocab, int[] rowStart, long nanos) {
        return new StepResult(MemorySegment.ofArray(logits), vocab, rowStart, nanos);
    }

    /**
     * A host backend's result from every requested row's logits ({@code rows × vocab}, in {@code batch}'s order):
     * the rows of argmax-only chunks come back as their token, the others as logits.
     */
    public static StepResult of(float[] logits, int vocab, StepBatch batch, long nanos) {
        boolean[] argmaxRows = batch.argmaxRows();
        int rows = argmaxRows.length;
        if (logits.length != (long) rows * vocab) {
            throw new IllegalArgumentException(logits.length + " logits are not " + rows + " rows of " + vocab);
        }
        int[] rowStart = batch.rowStarts();
        int[] tokens = new int[rows];
        MemorySegment all = MemorySegment.ofArray(logits);
        int whole = 0;
        for (int row = 0; row < rows; row++) {
            if (argmaxRows[row]) {
                tokens[row] = argmax(all, (long) row * vocab, vocab);
            } else {
                tokens[row] = -1;
                whole++;
            }
        }
        if (whole == rows) {
            return new StepResult(all, vocab, rowStart, tokens, nanos);
        }
        float[] kept = new float[whole * vocab];
        for (int r = 0, k = 0; r < rows; r++) {
            if (tokens[r] < 0) {
                System.arraycopy(logits, r * vocab, kept, k++ * vocab, vocab);
            }
        }
        return new StepResult(MemorySegment.ofArray(kept), vocab, rowStart, tokens, nanos);
    }

    /**
     * The argmax rule every backend follows, the engine's greedy draw: the first index holding the largest value,
     * scanning from index 0 with a strict {@code >} — so a NaN never wins except at index 0 (nothing compares
     * greater than it), and -0 and +0 tie.
     */
    public static int argmax(MemorySegment row, long offset, int vocab) {
        int best = 0;
        float bestValue = row.getAtIndex(FLOAT, offset);
        for (int i = 1; i < vocab; i++) {
            float v = row.getAtIndex(FLOAT, offset + i);
            if (v > bestValue) {
                bestValue = v;
                best = i;
            }
        }
        return best;
    }

    private static int[] noTokens(long rows) {
        int[] t = new int[Math.toIntExact(rows)];
        Arrays.fill(t, -1);
        return t;
    }

    /** Rows the step returned, as logits or as tokens. */
    public int rows() {
        return tokens.length;
    }

    /** Per row, the element where its logits start in {@link #logits}, or -1 for a row returned as its token. */
    public long[] rowOffsets() {
        long[] out = new long[tokens.length];
        long next = 0;
        for (int r = 0; r < out.length; r++) {
            if (tokens[r] < 0) {
                out[r] = next;
                next += vocab;
            } else {
                out[r] = -1;
            }
        }
        return out;
    }

    /** Logit of {@code token} in row {@code row} (a row index over the whole step) returned as logits. */
    public float logit(int row, int token) {
        return logits.getAtIndex(FLOAT, offset(row) + token);
    }

    /** Copies the logits of chunk {@code chunk}'s {@code row}-th requested row, which came back as logits. */
    public float[] row(int chunk, int row) {
        float[] out = new float[vocab];
        MemorySegment.copy(logits, FLOAT, 4L * offset(rowStart[chunk] + row), out, 0, vocab);
        return out;
    }

    private long offset(int row) {
        if (tokens[row] >= 0) {
            throw new IllegalStateException("row " + row + " came back as its token " + tokens[row] + ", not logits");
        }
        long whole = 0;
        for (int r = 0; r < row; r++) {
            whole += tokens[r] < 0 ? 1 : 0;
        }
        return whole * vocab;
    }
}
