package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.PinnedStaging;
import io.strata.backend.cuda.nat.CudaNative;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Grow-only page-locked host memory through which a step's plan goes to the device in one copy, and its
 * logits come back (no per-step host allocation; pinned copies run at full speed).
 */
final class HostStaging implements AutoCloseable {
    private static final int H2D = 1;
    private static final int D2H = 2;
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

    /** Copies {@code n} floats from a device address into {@code dst[off..]}. */
    void readFloats(long device, float[] dst, int off, int n) {
        MemorySegment seg = segment(4L * n);
        CudaRuntime.check(CudaNative.strata_cuda_memcpy(pinned.address(), device, 4L * n, D2H), "cudaMemcpy logits");
        MemorySegment.copy(seg, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, dst, off, n);
    }

    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
            pinned = null;
        }
    }
}
