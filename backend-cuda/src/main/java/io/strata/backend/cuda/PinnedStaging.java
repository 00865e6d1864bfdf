package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory for the per-step metadata (positions, slot mappings, block tables) and the logits:
 * the engine fills or reads it through {@link #segment()} and the step's copies run at full PCIe speed and may
 * be asynchronous. Segments are scoped to the buffer, so one read after {@link #close} fails with an
 * exception instead of reading freed memory.
 */
public final class PinnedStaging implements AutoCloseable {
    private final long address;
    private final long bytes;
    private final Arena scope = Arena.ofShared();
    private boolean closed;

    public PinnedStaging(long bytes) {
        NativeLibrary.require();
        long[] p = new long[1];
        CudaRuntime.check(CudaNative.strata_cuda_malloc_host(bytes, p), "cudaMallocHost(" + bytes + ")");
        this.address = p[0];
        this.bytes = bytes;
    }

    public long address() {
        return address;
    }

    public MemorySegment segment() {
        return MemorySegment.ofAddress(address).reinterpret(bytes, scope, null);
    }

    /** Copies the first {@code n} bytes to a device buffer. */
    public void copyTo(DeviceBuffer dst, long n) {
        dst.uploadFrom(address, n);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            scope.close();
            CudaRuntime.check(CudaNative.strata_cuda_free_host(address), "cudaFreeHost");
        }
    }
}
