package io.strata.backend.cuda.nat;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The raw binding to {@code libstrata_cuda.so} (see {@code src/main/native/strata_cuda.h}). Every
 * function returns a CUDA error code; callers go through {@link io.strata.backend.cuda.CudaRuntime},
 * which turns codes into exceptions. Device and host addresses travel as {@code long}s so that a
 * whole step's metadata can be handed over in one call.
 *
 * <p>No static initialiser loads the library: {@link io.strata.backend.cuda.NativeLibrary} does it
 * exactly once, so a missing library becomes a probe result rather than an
 * {@code ExceptionInInitializerError}.
 */
@Platform(include = "strata_cuda.h", link = "strata_cuda")
public final class CudaNative {
    private CudaNative() {
    }

    public static native int strata_cuda_device_count(int[] count);

    public static native @Cast("const char*") BytePointer strata_cuda_error_string(int err);

    public static native @Cast("const char*") BytePointer strata_cuda_error_name(int err);

    public static native int strata_cuda_device_info(int device, @Cast("char*") byte[] name, int nameLen,
            @Cast("int64_t*") long[] totalBytes, @Cast("int64_t*") long[] freeBytes, int[] ccMajor,
            int[] ccMinor, int[] smCount, int[] driverVersion, int[] runtimeVersion);

    public static native int strata_cuda_set_device(int device);

    public static native int strata_cuda_mem_info(@Cast("int64_t*") long[] freeBytes, @Cast("int64_t*") long[] totalBytes);

    public static native int strata_cuda_malloc(@Cast("int64_t") long bytes, @Cast("int64_t*") long[] devicePtr);

    public static native int strata_cuda_free(@Cast("int64_t") long devicePtr);

    public static native int strata_cuda_malloc_host(@Cast("int64_t") long bytes, @Cast("int64_t*") long[] hostPtr);

    public static native int strata_cuda_free_host(@Cast("int64_t") long hostPtr);

    public static native int strata_cuda_memcpy(@Cast("int64_t") long dst, @Cast("int64_t") long src,
            @Cast("int64_t") long bytes, int kind);

    public static native int strata_cuda_memset(@Cast("int64_t") long dst, int value, @Cast("int64_t") long bytes);

    public static native int strata_cuda_synchronize();
}
