package io.strata.backend.cuda.model;

import java.lang.foreign.MemorySegment;

/**
 * The page-locked host memory a step's plan goes to the device through, and what the plan written there last
 * holds ({@link StepPlan.DenseRows}), so the next plan of the same shape writes only the dense table rows that
 * changed. One per stream of plans (the executor's eager steps, the decode graphs' replays).
 */
final class PlanStaging implements AutoCloseable {
    private final HostStaging host = new HostStaging();
    private final StepPlan.DenseRows held = new StepPlan.DenseRows();

    /** The first {@code size} bytes of the staging (grown, and then holding nothing, when smaller). */
    MemorySegment segment(long size) {
        return host.segment(size);
    }

    StepPlan.DenseRows held() {
        return held;
    }

    /** Queues the copy of the first {@code size} bytes to {@code device} on {@code stream}. */
    void copyTo(long device, long size, long stream) {
        host.copyTo(device, size, stream);
    }

    @Override
    public void close() {
        host.close();
    }
}
