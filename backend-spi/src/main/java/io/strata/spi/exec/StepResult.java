package io.strata.spi.exec;

/**
 * Logits of one step: the requested rows of every chunk, in batch order, each {@code vocab} fp32 values.
 *
 * @param logits    {@code rows × vocab}, row-major
 * @param vocab     vocabulary size
 * @param rowStart  per chunk, index of its first row ({@code rowStart[i+1] - rowStart[i]} rows)
 * @param nanos     wall time the backend spent on the step
 */
public record StepResult(float[] logits, int vocab, int[] rowStart, long nanos) {

    /** Copies the logits of chunk {@code chunk}'s {@code row}-th requested row. */
    public float[] row(int chunk, int row) {
        float[] out = new float[vocab];
        System.arraycopy(logits, (rowStart[chunk] + row) * vocab, out, 0, vocab);
        return out;
    }
}
