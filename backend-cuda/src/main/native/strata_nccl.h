// NCCL for Strata's multi-GPU workers, loaded at run time: libstrata_cuda.so has no link-time dependency on
// NCCL. The first call dlopen()s libnccl.so.2 (or $STRATA_NCCL_LIBRARY) and resolves the entry points below;
// if that fails every call returns STRATA_NCCL_UNAVAILABLE and strata_nccl_load_error() says why.
// Communicators and streams travel as int64 handles (stream 0 = the default stream); buffers are device
// addresses. Counts and offsets are in elements.
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_NCCL_UNIQUE_ID_BYTES 128
#define STRATA_NCCL_UNAVAILABLE (-1)
#define STRATA_NCCL_BAD_ARGUMENT (-2)
#define STRATA_NCCL_F32 0
#define STRATA_NCCL_BF16 1

// 0 when NCCL is loaded (loading it on the first call), else STRATA_NCCL_UNAVAILABLE.
int strata_nccl_load(void);
// Why loading failed ("" when it did not).
const char *strata_nccl_load_error(void);
// NCCL's version code (e.g. 22703 for 2.27.3).
int strata_nccl_version(int *version);
// Writes the STRATA_NCCL_UNIQUE_ID_BYTES bytes of a new unique id (rank 0 creates it, the others receive it).
int strata_nccl_get_unique_id(char *id);
// Joins the communicator of nranks ranks named by id as rank; blocks until every rank has joined.
// Sets NCCL_NVLS_ENABLE=0 first (NVLink SHARP multicast stays off).
int strata_nccl_comm_init_rank(int64_t *comm, int nranks, const char *id, int rank);
// Number of ranks of comm.
int strata_nccl_comm_count(int64_t comm, int *count);
// recv = Σ over ranks of send, count elements of dtype (STRATA_NCCL_F32 or STRATA_NCCL_BF16); in place when
// send == recv. Enqueued on stream.
int strata_nccl_all_reduce_sum(int64_t send, int64_t recv, int64_t count, int dtype, int64_t comm, int64_t stream);
// All-to-all of variable blocks as one group of sends and receives: to peer p goes
// send[send_offsets[p] .. + send_counts[p]), from peer p arrives recv[recv_offsets[p] .. + recv_counts[p]).
// The four host arrays have one entry per rank; a zero count skips that peer. Enqueued on stream.
int strata_nccl_all_to_all(int64_t send, const int64_t *send_counts, const int64_t *send_offsets, int64_t recv,
                           const int64_t *recv_counts, const int64_t *recv_offsets, int dtype, int64_t comm,
                           int64_t stream);
// Frees comm after its work is done.
int strata_nccl_comm_destroy(int64_t comm);
// Aborts comm: pending operations fail on every rank (used when a peer died).
int strata_nccl_comm_abort(int64_t comm);
// Text for a code this API returned (NCCL's own text for NCCL's codes).
const char *strata_nccl_error_string(int err);

#ifdef __cplusplus
}
#endif
