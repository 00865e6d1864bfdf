package io.strata.platform.engine;

import io.strata.platform.engine.sampling.Sampler;
import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;

/**
 * Runs one engine step: the scheduler's chunks in, logits rows out. The platform's side of a step; the
 * backend's side is the SPI's {@code ModelExecutor}, which {@link BackendStepRunner} drives. Called only
 * from the engine thread.
 */
public interface StepRunner {

    /**
     * One sequence's share of a step: tokens {@code [start, start + count)} of the sequence, whose KV
     * pages the KV manager has allocated.
     *
     * @param logits   which logits rows the engine needs from this chunk
     */
    record Chunk(Sequence seq, int start, int count, LogitsWanted logits) {
        /**
         * The chunk's one row is sampled as the argmax of its raw logits and nothing else reads it (greedy, no
         * logprobs, no penalties, nothing suppressed), so the backend may return the token instead of the row.
         */
        boolean argmaxOnly() {
            return logits == LogitsWanted.LAST && Sampler.isPlainArgmax(seq.params, seq.history);
        }
    }

    enum LogitsWanted {
        /** Middle of a prefill: none. */
        NONE,
        /** The chunk ends at the sequence's last token: one row, to sample from. */
        LAST,
        /** Every position of the chunk (prompt logprobs); the last row is also sampled from when it ends the sequence. */
        ALL
    }

    /**
     * @param logits  rows of {@code vocab} fp32 values, chunk after chunk in the order given, only for chunks
     *                that asked: one row for LAST, {@code count} rows for ALL — except rows returned as their
     *                token. The backend's view (see {@link StepResult}): valid only until the next {@link #execute}
     * @param tokens  per row, its argmax token when the backend returned that instead of the row (a LAST chunk
     *                of a choice whose draw is the plain argmax, {@link Chunk#argmaxOnly}), else -1
     * @param offsets per row, the element of {@code logits} where its row starts, or -1 for a token row
     */
    record Output(MemorySegment logits, int vocab, int[] tokens, long[] offsets) {
        /** Every row as logits: {@code logits.byteSize() / (4 vocab)} of them. */
        public Output(MemorySegment logits, int vocab) {
            this(new StepResult(logits, vocab, new int[0], 0));
        }

        Output(StepResult r) {
            this(r.logits(), r.vocab(), r.tokens(), r.rowOffsets());
        }

        /** The row's argmax token, or -1 when it came back as logits. */
        int token(int row) {
            return tokens[row];
        }

        /** Element of {@link #logits} where the row starts; the row came back as logits. */
        long offset(int row) {
            if (offsets[row] < 0) {
                throw new IllegalStateException("row " + row + " came back as its token, not logits");
            }
            return offsets[row];
        }
    }

    Output execute(List<Chunk> chunks);

    /**
     * Once per loss, why the backend's KV contents are gone (its worker process crashed and restarted with
     * empty pools); empty normally. The engine asks before planning each step.
     */
    default Optional<String> kvLost() {
        return Optional.empty();
    }

    /**
     * Why the backend can never serve another step (its worker process crash-looped or could not be restarted),
     * or empty. The engine asks on every turn of its loop, so readiness goes down without a request failing first.
     */
    default Optional<String> down() {
        return Optional.empty();
    }

    /** Vocabulary (logits row length). */
    int vocab();
}
