package io.strata.platform.engine;

import reactor.core.publisher.Flux;

import java.util.List;
import java.util.Optional;

/** The engine as the API sees it. */
public interface InferenceEngine extends AutoCloseable {

    ModelCard model();

    TextCodec codec();

    /**
     * Queues one choice right away. Throws {@link QueueFullException} or {@link EngineUnavailableException}
     * when it cannot be queued, so the API can still answer 503 before any byte is sent.
     */
    Submission submit(GenerationRequest request);

    /** Whether the engine can serve; {@code detail} says why not. */
    EngineStatus status();

    record EngineStatus(boolean up, String detail) {
    }

    /**
     * The latest state the engine thread published (counts, KV pages, requests in flight); empty for an
     * engine without a loop (no model loaded). Any thread.
     */
    default Optional<EngineSnapshot> snapshot() {
        return Optional.empty();
    }

    /**
     * Each engine rank's load from what it published, in rank order: one entry for a serving engine, one per
     * rank with {@code strata.engine.data-parallel-size} above 1, none for an engine without a loop. Any thread.
     */
    default List<RankLoad> rankLoads() {
        return List.of();
    }

    /** Aborts every choice of a request by id, from any thread; false when none is in flight. */
    default boolean abort(String requestId) {
        return false;
    }

    /** Stops serving; what is still running finishes with reason ABORT. */
    @Override
    default void close() throws Exception {
    }

    /** A queued choice. */
    interface Submission {
        /**
         * {@link GenerationEvent.Started}, deltas, then one {@link GenerationEvent.Finished}. Cancelling the
         * subscription aborts the choice and frees its KV pages at once. Subscribe once.
         */
        Flux<GenerationEvent> events();

        /** Aborts the choice (idempotent); its flux then finishes with reason ABORT. */
        void abort();
    }
}
