package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.NcclNative;
import org.bytedeco.javacpp.Loader;

/**
 * NCCL communicators for the multi-GPU workers (docs/scale-out.md). NCCL is the host's
 * {@code libnccl.so.2}, opened on first use; {@link #unavailableReason()} says why it cannot be used. Every
 * operation is enqueued on the given CUDA stream (0 = default) and returns before it completes.
 */
public final class Nccl {
    /** Bytes of a unique id, the token rank 0 creates and every rank passes to {@link #join}. */
    public static final int UNIQUE_ID_BYTES = 128;

    /** Element types of the collectives. */
    public enum DType {
        F32(0, 4), BF16(1, 2);

        final int code;
        final int bytes;

        DType(int code, int bytes) {
            this.code = code;
            this.bytes = bytes;
        }
    }

    private static volatile String reason;

    private Nccl() {
    }

    /** Why NCCL cannot be used here, or {@code null} when it can. */
    public static String unavailableReason() {
        String r = reason;
        if (r != null) {
            return r.isEmpty() ? null : r;
        }
        synchronized (Nccl.class) {
            if (reason == null) {
                reason = probe();
            }
            return reason.isEmpty() ? null : reason;
        }
    }

    private static String probe() {
        NativeLibrary.Outcome o = NativeLibrary.load();
        if (!o.loaded()) {
            return "NCCL unavailable: " + o.reason();
        }
        try {
            Loader.load(NcclNative.class);
        } catch (Throwable e) {
            return "NCCL unavailable: its binding failed to load: " + e;
        }
        if (NcclNative.strata_nccl_load() != 0) {
            return "NCCL unavailable: " + NcclNative.strata_nccl_load_error().getString();
        }
        return "";
    }

    private static void require() {
        String r = unavailableReason();
        if (r != null) {
            throw new NcclException(-1, r);
        }
    }

    static void check(int code, String what) {
        if (code != 0) {
            throw new NcclException(code, what + ": " + NcclNative.strata_nccl_error_string(code).getString()
                + " (code " + code + ")");
        }
    }

    /** NCCL's version code, e.g. 22703 for 2.27.3. */
    public static int version() {
        require();
        int[] v = new int[1];
        check(NcclNative.strata_nccl_version(v), "ncclGetVersion");
        return v[0];
    }

    /** A new unique id (on rank 0; the others receive it over the control channel). */
    public static byte[] uniqueId() {
        require();
        byte[] id = new byte[UNIQUE_ID_BYTES];
        check(NcclNative.strata_nccl_get_unique_id(id), "ncclGetUniqueId");
        return id;
    }

    /** Joins the group of {@code ranks} named by {@code id} as {@code rank} on the current device; blocks for all. */
    public static Comm join(int ranks, byte[] id, int rank) {
        require();
        if (id.length != UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("a unique id has " + UNIQUE_ID_BYTES + " bytes, not " + id.length);
        }
        long[] c = new long[1];
        check(NcclNative.strata_nccl_comm_init_rank(c, ranks, id, rank), "ncclCommInitRank(rank " + rank + " of "
            + ranks + ")");
        return new Comm(c[0], ranks, rank);
    }

    /** One rank's communicator. Close destroys it; {@link #abort()} is for a group that lost a rank. */
    public static final class Comm implements AutoCloseable {
        private long handle;
        private final int size;
        private final int rank;

        private Comm(long handle, int size, int rank) {
            this.handle = handle;
            this.size = size;
            this.rank = rank;
        }

        public int size() {
            return size;
        }

        public int rank() {
            return rank;
        }

        /** {@code recv = Σ_ranks send}, {@code count} elements; {@code send == recv} is in place. */
        public void allReduceSum(long send, long recv, long count, DType type, long stream) {
            check(NcclNative.strata_nccl_all_reduce_sum(send, recv, count, type.code, live(), stream), "ncclAllReduce");
        }

        /**
         * Variable-block all-to-all (grouped send/receive); counts and offsets in elements, one per rank; a zero
         * count skips that peer.
         */
        public void allToAll(long send, long[] sendCounts, long[] sendOffsets, long recv, long[] recvCounts,
                             long[] recvOffsets, DType type, long stream) {
            for (long[] a : new long[][]{sendCounts, sendOffsets, recvCounts, recvOffsets}) {
                if (a.length != size) {
                    throw new IllegalArgumentException("all-to-all needs " + size + " counts and offsets, got " + a.length);
                }
            }
            check(NcclNative.strata_nccl_all_to_all(send, sendCounts, sendOffsets, recv, recvCounts, recvOffsets,
                type.code, live(), stream), "all-to-all");
        }

        /** Fails every rank's pending operations; the communicator is gone afterwards. */
        public void abort() {
            if (handle != 0) {
                long h = handle;
                handle = 0;
                check(NcclNative.strata_nccl_comm_abort(h), "ncclCommAbort");
            }
        }

        @Override
        public void close() {
            if (handle != 0) {
                long h = handle;
                handle = 0;
                check(NcclNative.strata_nccl_comm_destroy(h), "ncclCommDestroy");
            }
        }

        private long live() {
            if (handle == 0) {
                throw new IllegalStateException("communicator of rank " + rank + " is closed");
            }
            return handle;
        }
    }
}
