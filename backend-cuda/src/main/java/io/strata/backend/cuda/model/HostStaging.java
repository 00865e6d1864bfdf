package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.PinnedStaging;
import io.strata.backend.cuda.nat.CudaNative;

import java.lang.foreign.MemorySegment;

/**
 * Grow-only page-locked host memory through which a step's plan goes to the device in one copy, or its
 * logits come back (no per-step host allocation; pinned copies run at full speed and asynchronously). The
 * plan and the logits use separate instances, so reading logits never moves a buffer a queued copy reads.
 */
final class HostStaging implements AutoCloseable {
    private static final int H2D = 1;
    private static final int D2H = 2;
    private PinnedStaging pinned;
    private long bytes;

    MemorySegment segment(long size) {
        if (pinned == null || bytes < size) {
            if (pinned != null) {
                // a copy queued on a non-blocking stream may still read the old buffer
                CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "cudaDeviceSynchronize (host staging)");
                pinned.close();
            }
            bytes = Math.max(size, bytes + bytes / 2);
            pinned = new PinnedStaging(bytes);
        }
        return pinned.segment().asSlice(0, size);
    }

    /** Queues the copy of the first {@code size} bytes of the segment to {@code device} on {@code stream}. */
    void copyTo(long device, long size, long stream) {
        CudaRuntime.check(CudaNative.strata_cuda_memcpy_async(device, pinned.address(), size, H2D, stream),
            "cudaMemcpyAsync step plan");
    }

    /**
     * Queues the copy of {@code bytes} bytes from a device address to offset {@code at} of the buffer, after the
     * work queued on {@code stream}; the caller synchronises the stream before it reads them. The buffer must
     * already span them ({@link #segment}): a copy never grows it.
     */
    void copyFrom(long device, long at, long bytes, long stream) {
        if (pinned == null || at + bytes > this.bytes) {
            throw new IllegalStateException("host staging of " + this.bytes + " bytes cannot take " + bytes + " at " + at);
        }
        CudaRuntime.check(CudaNative.strata_cuda_memcpy_async(pinned.address() + at, device, bytes, D2H, stream),
            "cudaMemcpyAsync logits");
    }

    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
            pinned = null;
        }
    }
}
