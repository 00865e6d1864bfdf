package io.strata.backend.cuda.nat;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The raw binding to the NCCL part of {@code libstrata_cuda.so} ({@code src/main/native/strata_nccl.h}): NCCL
 * itself is opened at run time, so this binding loads wherever the CUDA binding does and answers
 * "unavailable" where the host has no NCCL. Use it through {@link io.strata.backend.cuda.Nccl}.
 */
@Platform(include = "strata_nccl.h", link = "strata_cuda")
public final class NcclNative {
    private NcclNative() {
    }

    public static native int strata_nccl_load();

    public static native @Cast("const char*") BytePointer strata_nccl_load_error();

    public static native int strata_nccl_version(int[] version);

    public static native int strata_nccl_get_unique_id(@Cast("char*") byte[] id);

    public static native int strata_nccl_comm_init_rank(@Cast("int64_t*") long[] comm, int nranks,
            @Cast("const char*") byte[] id, int rank);

    public static native int strata_nccl_comm_count(@Cast("int64_t") long comm, int[] count);

    public static native int strata_nccl_all_reduce_sum(@Cast("int64_t") long send, @Cast("int64_t") long recv,
            @Cast("int64_t") long count, int dtype, @Cast("int64_t") long comm, @Cast("int64_t") long stream);

    public static native int strata_nccl_all_to_all(@Cast("int64_t") long send,
            @Cast("const int64_t*") long[] sendCounts, @Cast("const int64_t*") long[] sendOffsets,
            @Cast("int64_t") long recv, @Cast("const int64_t*") long[] recvCounts,
            @Cast("const int64_t*") long[] recvOffsets, int dtype, @Cast("int64_t") long comm,
            @Cast("int64_t") long stream);

    public static native int strata_nccl_comm_destroy(@Cast("int64_t") long comm);

    public static native int strata_nccl_comm_abort(@Cast("int64_t") long comm);

    public static native @Cast("const char*") BytePointer strata_nccl_error_string(int err);
}
