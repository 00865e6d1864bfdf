package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.ShortPointer;

/**
 * A block of device memory. Copies go through a temporary native buffer because the JVM may move
 * Java arrays; bulk data (weights) should use {@link #uploadFrom(long, long)} with a pinned or mapped
 * address instead.
 */
public final class DeviceBuffer implements AutoCloseable {
    private static final int H2D = 1;
    private static final int D2H = 2;

    private final long address;
    private final long bytes;
    private boolean closed;

    private DeviceBuffer(long address, long bytes) {
        this.address = address;
        this.bytes = bytes;
    }

    public static DeviceBuffer allocate(long bytes) {
        NativeLibrary.require();
        if (bytes <= 0) {
            throw new IllegalArgumentException("device allocation must be positive: " + bytes);
        }
        long[] p = new long[1];
        CudaRuntime.check(CudaNative.strata_cuda_malloc(bytes, p), "cudaMalloc(" + bytes + ")");
        return new DeviceBuffer(p[0], bytes);
    }

    public static DeviceBuffer of(float[] data) {
        DeviceBuffer b = allocate(4L * data.length);
        b.upload(data);
        return b;
    }

    public static DeviceBuffer of(short[] data) {
        DeviceBuffer b = allocate(2L * data.length);
        b.upload(data);
        return b;
    }

    public static DeviceBuffer of(int[] data) {
        DeviceBuffer b = allocate(4L * data.length);
        b.upload(data);
        return b;
    }

    public static DeviceBuffer of(long[] data) {
        DeviceBuffer b = allocate(8L * data.length);
        b.upload(data);
        return b;
    }

    public static DeviceBuffer of(byte[] data) {
        DeviceBuffer b = allocate(data.length);
        b.upload(data);
        return b;
    }

    public long address() {
        return address;
    }

    public long bytes() {
        return bytes;
    }

    public void upload(float[] data) {
        try (FloatPointer p = new FloatPointer(data)) {
            copyIn(p, 4L * data.length);
        }
    }

    public void upload(short[] data) {
        try (ShortPointer p = new ShortPointer(data)) {
            copyIn(p, 2L * data.length);
        }
    }

    public void upload(int[] data) {
        try (IntPointer p = new IntPointer(data)) {
            copyIn(p, 4L * data.length);
        }
    }

    public void upload(long[] data) {
        try (LongPointer p = new LongPointer(data)) {
            copyIn(p, 8L * data.length);
        }
    }

    public void upload(byte[] data) {
        try (BytePointer p = new BytePointer(data)) {
            copyIn(p, data.length);
        }
    }

    /** Copies {@code n} bytes from a host address (pinned staging or a mapped checkpoint). */
    public void uploadFrom(long hostAddress, long n) {
        checkSize(n);
        CudaRuntime.check(CudaNative.strata_cuda_memcpy(address, hostAddress, n, H2D), "cudaMemcpy H2D");
    }

    public void fill(int value) {
        CudaRuntime.check(CudaNative.strata_cuda_memset(address, value, bytes), "cudaMemset");
    }

    public float[] downloadFloats(int n) {
        try (FloatPointer p = new FloatPointer(n)) {
            copyOut(p, 4L * n);
            float[] out = new float[n];
            p.get(out);
            return out;
        }
    }

    public short[] downloadShorts(int n) {
        try (ShortPointer p = new ShortPointer(n)) {
            copyOut(p, 2L * n);
            short[] out = new short[n];
            p.get(out);
            return out;
        }
    }

    public int[] downloadInts(int n) {
        try (IntPointer p = new IntPointer(n)) {
            copyOut(p, 4L * n);
            int[] out = new int[n];
            p.get(out);
            return out;
        }
    }

    public byte[] downloadBytes(int n) {
        try (BytePointer p = new BytePointer(n)) {
            copyOut(p, n);
            byte[] out = new byte[n];
            p.get(out);
            return out;
        }
    }

    private void copyIn(Pointer host, long n) {
        checkSize(n);
        CudaRuntime.check(CudaNative.strata_cuda_memcpy(address, host.address(), n, H2D), "cudaMemcpy H2D");
    }

    private void copyOut(Pointer host, long n) {
        checkSize(n);
        CudaRuntime.check(CudaNative.strata_cuda_memcpy(host.address(), address, n, D2H), "cudaMemcpy D2H");
    }

    private void checkSize(long n) {
        if (closed) {
            throw new IllegalStateException("device buffer already freed");
        }
        if (n > bytes) {
            throw new IllegalArgumentException("copy of " + n + " bytes into a device buffer of " + bytes);
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            CudaRuntime.check(CudaNative.strata_cuda_free(address), "cudaFree");
        }
    }
}
