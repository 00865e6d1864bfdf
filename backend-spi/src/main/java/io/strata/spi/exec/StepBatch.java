package io.strata.spi.exec;

import java.util.List;

/**
 * One engine step: chunks of distinct requests, in any mix of prefill and decode.
 *
 * @param chunks the requests' chunks; results come back in this order
 */
public record StepBatch(List<SequenceChunk> chunks) {
    public StepBatch {
        chunks = List.copyOf(chunks);
        if (chunks.isEmpty()) {
            throw new IllegalArgumentException("a step needs at least one chunk");
        }
        long distinct = chunks.stream().mapToLong(SequenceChunk::requestId).distinct().count();
        if (distinct != chunks.size()) {
            throw new IllegalArgumentException("a request may appear only once per step");
        }
    }

    public int totalTokens() {
        return chunks.stream().mapToInt(c -> c.tokens().length).sum();
    }

    /** Rows of logits the step returns. */
    public int logitRows() {
        return chunks.stream().mapToInt(c -> c.logitRows().length).sum();
    }

    /** Per chunk, the index of its first returned row, then the total ({@link StepResult#rowStart}). */
    public int[] rowStarts() {
        int[] out = new int[chunks.size() + 1];
        for (int i = 0; i < chunks.size(); i++) {
            out[i + 1] = out[i] + chunks.get(i).logitRows().length;
        }
        return out;
    }

    /** Per returned row, whether its chunk wants only the row's argmax ({@link SequenceChunk#argmaxOnly}). */
    public boolean[] argmaxRows() {
        boolean[] out = new boolean[logitRows()];
        int row = 0;
        for (SequenceChunk c : chunks) {
            for (int r = 0; r < c.logitRows().length; r++) {
                out[row++] = c.argmaxOnly();
            }
        }
        return out;
    }
}
