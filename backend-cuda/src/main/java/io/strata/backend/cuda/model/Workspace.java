package io.strata.backend.cuda.model;

import io.strata.backend.cuda.DeviceBuffer;

import java.util.HashMap;
import java.util.Map;

/**
 * A step's device scratch, one grow-only buffer per use: a step asks for what its shape needs and gets
 * the existing buffer when it is large enough, so steady decoding allocates nothing.
 */
final class Workspace implements AutoCloseable {
    private static final long ALIGN = 256;
    private final Map<String, DeviceBuffer> buffers = new HashMap<>();
    private long bytes;
    private boolean frozen;

    /** Device address of at least {@code size} bytes for {@code use}; contents are undefined. */
    long get(String use, long size) {
        long need = Math.max(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN);
        DeviceBuffer b = buffers.get(use);
        if (b == null || b.bytes() < need) {
            if (frozen) {
                throw new IllegalStateException("workspace " + use + " would have to grow to " + need
                    + " bytes after CUDA graphs were captured over it");
            }
            if (b != null) {
                // kernels queued on a non-blocking stream may still use the old buffer
                io.strata.backend.cuda.CudaRuntime.check(io.strata.backend.cuda.nat.CudaNative.strata_cuda_synchronize(),
                    "cudaDeviceSynchronize (workspace growth)");
                bytes -= b.bytes();
                b.close();
                buffers.remove(use);
            }
            // grow by half again so a slowly lengthening context does not reallocate every step
            long grown = b == null ? need : Math.max(need, b.bytes() + b.bytes() / 2);
            b = DeviceBuffer.allocate(grown);
            buffers.put(use, b);
            bytes += grown;
        }
        return b.address();
    }

    /** From now on no buffer moves: graphs captured over this workspace keep their addresses. */
    void freeze() {
        frozen = true;
    }

    long bytes() {
        return bytes;
    }

    @Override
    public void close() {
        buffers.values().forEach(DeviceBuffer::close);
        buffers.clear();
        bytes = 0;
    }
}
