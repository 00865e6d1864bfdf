package io.strata.backend.cuda;

import io.strata.model.checkpoint.Tensor;

/** Uploads checkpoint tensors straight from their memory-mapped bytes (no Java heap copy). */
public final class DeviceWeights {
    private DeviceWeights() {
    }

    /** One device buffer holding the tensor's raw bytes in its checkpoint dtype. */
    public static DeviceBuffer upload(Tensor t) {
        DeviceBuffer b = DeviceBuffer.allocate(Math.max(1, t.byteSize()));
        try {
            b.uploadFrom(t.segment().address(), t.byteSize());
            return b;
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
    }
}
