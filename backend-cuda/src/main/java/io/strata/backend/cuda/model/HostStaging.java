package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.PinnedStaging;
import io.strata.backend.cuda.nat.CudaNative;

import java.lang.foreign.MemorySegment;

/** Grow-only page-locked host memory through which a step's plan goes to the device in one copy. */
final class HostStaging implements AutoCloseable {
    private static final int H2D = 1;
    private PinnedStaging pinned;
    private long bytes;

    MemorySegment segment(long size) {
        if (pinned == null || bytes < size) {
            if (pinned != null) {
                pinned.close();
            }
            bytes = Math.max(size, bytes + bytes / 2);
            pinned = new PinnedStaging(bytes);
        }
        return pinned.segment().asSlice(0, size);
    }

    void copyTo(long device, long size) {
        CudaRuntime.check(CudaNative.strata_cuda_memcpy(device, pinned.address(), size, H2D), "cudaMemcpy step plan");
    }

    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
            pinned = null;
        }
    }
}
