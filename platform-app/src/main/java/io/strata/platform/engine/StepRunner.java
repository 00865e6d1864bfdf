package io.strata.platform.engine;

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
     * @param logits rows of {@code vocab} fp32 values, chunk after chunk in the order given, only for chunks
     *               that asked: one row for LAST, {@code count} rows for ALL. The backend's view (see
     *               {@link StepResult}): valid only until the next {@link #execute}
     */
    record Output(MemorySegment logits, int vocab) {
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
