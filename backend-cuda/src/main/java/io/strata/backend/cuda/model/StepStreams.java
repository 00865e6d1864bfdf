package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;

/**
 * The streams a step runs on: the main chain, and a side stream that takes the work a layer can do beside
 * it (the C4A indexer path, the C128A compressor and the attention lists outside C4A layers, joined by an event
 * before attention reads what the side computed; the shared expert, joined before the MoE sums it with the routed
 * experts). With one stream the side is the main stream and fork/join do nothing. An optional {@link StepProfile}
 * gets a mark at each component boundary of the main chain.
 */
final class StepStreams implements AutoCloseable {
    private final long main;
    private final long side;
    private final long forkEvent;
    private final long joinEvent;
    private StepProfile profile;
    /** A fork not yet joined: a join without one would make the main stream wait on an event from before it. */
    private boolean forked;

    private StepStreams(long main, long side, long forkEvent, long joinEvent) {
        this.main = main;
        this.side = side;
        this.forkEvent = forkEvent;
        this.joinEvent = joinEvent;
    }

    /** {@code count} = 1 (everything on one stream) or 2 (main + side). */
    static StepStreams create(int count) {
        if (count != 1 && count != 2) {
            throw new IllegalArgumentException("strata.cuda.streams must be 1 or 2, got " + count);
        }
        long main = newStream();
        if (count == 1) {
            return new StepStreams(main, main, 0, 0);
        }
        return new StepStreams(main, newStream(), newEvent(), newEvent());
    }

    private static long newStream() {
        long[] s = new long[1];
        CudaRuntime.check(CudaNative.strata_stream_create(s), "cudaStreamCreate");
        return s[0];
    }

    private static long newEvent() {
        long[] e = new long[1];
        CudaRuntime.check(CudaNative.strata_event_create(0, e), "cudaEventCreate");
        return e[0];
    }

    long main() {
        return main;
    }

    boolean concurrent() {
        return side != main;
    }

    /** Lets the side stream start after everything issued on the main stream so far; returns the side stream. */
    long fork() {
        if (concurrent()) {
            CudaRuntime.check(CudaNative.strata_event_record(forkEvent, main), "fork: cudaEventRecord");
            CudaRuntime.check(CudaNative.strata_stream_wait_event(side, forkEvent), "fork: cudaStreamWaitEvent");
            forked = true;
        }
        return side;
    }

    /**
     * Makes the main stream wait for everything issued on the side stream since the last {@link #fork}; nothing
     * without a fork (while a graph is captured, waiting on an event recorded outside the capture invalidates it).
     */
    void join() {
        if (forked) {
            forked = false;
            CudaRuntime.check(CudaNative.strata_event_record(joinEvent, side), "join: cudaEventRecord");
            CudaRuntime.check(CudaNative.strata_stream_wait_event(main, joinEvent), "join: cudaStreamWaitEvent");
        }
    }

    /** Waits for both streams. */
    void synchronize() {
        CudaRuntime.check(CudaNative.strata_stream_synchronize(main), "step");
        if (concurrent()) {
            CudaRuntime.check(CudaNative.strata_stream_synchronize(side), "step (side stream)");
        }
    }

    void profile(StepProfile p) {
        this.profile = p;
    }

    /** Attributes the main stream's work from here to the next mark to {@code component} (when profiling). */
    void mark(StepProfile.Component component) {
        if (profile != null) {
            profile.mark(component, main);
        }
    }

    @Override
    public void close() {
        if (concurrent()) {
            CudaNative.strata_event_destroy(forkEvent);
            CudaNative.strata_event_destroy(joinEvent);
            CudaNative.strata_stream_destroy(side);
        }
        CudaNative.strata_stream_destroy(main);
    }
}
