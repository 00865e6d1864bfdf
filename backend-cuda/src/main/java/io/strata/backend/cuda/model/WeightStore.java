package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.DeviceBuffer;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.checkpoint.Tensor;

import java.util.ArrayList;
import java.util.List;

/**
 * The device copies of a model's weights, byte for byte in their checkpoint formats (no up-conversion; FP4
 * words are then rearranged in place by {@link DeviceMatrix#ofCheckpointBytes}):
 * every buffer it hands out is freed by {@link #close()}, and {@link #bytes()} is what the weights hold.
 */
public final class WeightStore implements AutoCloseable {
    private static final int H2D = 1;
    private final List<DeviceBuffer> buffers = new ArrayList<>();
    private long bytes;

    /** One buffer with the tensor's raw bytes, copied straight from the mapped checkpoint. */
    public DeviceBuffer upload(Tensor t) {
        return concat(List.of(t));
    }

    /**
     * One buffer holding the tensors' bytes back to back, in order (the routed experts of a layer, so a
     * grouped kernel finds expert {@code e} at {@code e * stride}). All tensors must have the same size.
     */
    public DeviceBuffer concat(List<Tensor> tensors) {
        long each = tensors.getFirst().byteSize();
        for (Tensor t : tensors) {
            if (t.byteSize() != each) {
                throw new IllegalArgumentException("tensor " + t.name() + " has " + t.byteSize() + " bytes, expected "
                    + each + " like " + tensors.getFirst().name());
            }
        }
        return join(tensors);
    }

    /** One buffer holding the tensors' bytes back to back, in order, whatever their sizes. */
    public DeviceBuffer join(List<Tensor> tensors) {
        long total = tensors.stream().mapToLong(Tensor::byteSize).sum();
        DeviceBuffer b = allocate(Math.max(1, total));
        long off = 0;
        for (Tensor t : tensors) {
            CudaRuntime.check(CudaNative.strata_cuda_memcpy(b.address() + off, t.segment().address(), t.byteSize(), H2D),
                "cudaMemcpy " + t.name());
            off += t.byteSize();
        }
        return b;
    }

    /** A buffer of floats (small host-side tensors converted once, e.g. norm weights stored as BF16). */
    public DeviceBuffer upload(float[] values) {
        DeviceBuffer b = allocate(4L * Math.max(1, values.length));
        b.upload(values);
        return b;
    }

    public DeviceBuffer upload(int[] values) {
        DeviceBuffer b = allocate(4L * Math.max(1, values.length));
        b.upload(values);
        return b;
    }

    public DeviceBuffer allocate(long n) {
        DeviceBuffer b = DeviceBuffer.allocate(n);
        buffers.add(b);
        bytes += n;
        return b;
    }

    /** Bytes held on the device. */
    public long bytes() {
        return bytes;
    }

    @Override
    public void close() {
        for (DeviceBuffer b : buffers) {
            b.close();
        }
        buffers.clear();
        bytes = 0;
    }
}
