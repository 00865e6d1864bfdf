/*
 * Strata CUDA backend: the C ABI the JVM binds to (through JavaCPP).
 *
 * Plain C on purpose: the JNI glue that JavaCPP generates includes only this header, so it compiles
 * with g++ and no CUDA headers. Every function returns a cudaError_t value (0 = success); the
 * message for a code comes from strata_cuda_error_string. Nothing here throws or aborts.
 */
#ifndef STRATA_CUDA_H
#define STRATA_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- probe ---------------------------------------------------------------------------------- */
int strata_cuda_device_count(int *count);
const char *strata_cuda_error_string(int err);
const char *strata_cuda_error_name(int err);
/* name: caller buffer of name_len bytes (NUL-terminated on return). */
int strata_cuda_device_info(int device, char *name, int name_len, int64_t *total_bytes,
                            int64_t *free_bytes, int *cc_major, int *cc_minor, int *sm_count,
                            int *driver_version, int *runtime_version);

/* ---- memory and streams --------------------------------------------------------------------- */
int strata_cuda_set_device(int device);
int strata_cuda_mem_info(int64_t *free_bytes, int64_t *total_bytes);
int strata_cuda_malloc(int64_t bytes, int64_t *device_ptr);
int strata_cuda_free(int64_t device_ptr);
int strata_cuda_malloc_host(int64_t bytes, int64_t *host_ptr);   /* pinned */
int strata_cuda_free_host(int64_t host_ptr);
/* kind: 1 host->device, 2 device->host, 3 device->device (pointers as int64 addresses) */
int strata_cuda_memcpy(int64_t dst, int64_t src, int64_t bytes, int kind);
int strata_cuda_memset(int64_t dst, int value, int64_t bytes);
int strata_cuda_synchronize(void);
/* Returns and resets this thread's last runtime error (launch checks read it: a failure already reported,
 * such as a refused allocation, must not resurface in the next launch). */
int strata_cuda_clear_error(void);

/* Streams, events and graphs. Streams are non-blocking (no implicit sync with the legacy stream); events
 * are created without timing unless timed != 0. Graph capture uses the thread-local mode, so another
 * thread's unrelated CUDA calls do not invalidate it. */
int strata_stream_create(int64_t *stream);
int strata_stream_destroy(int64_t stream);
int strata_stream_synchronize(int64_t stream);
int strata_event_create(int timed, int64_t *event);
int strata_event_destroy(int64_t event);
int strata_event_record(int64_t event, int64_t stream);
int strata_stream_wait_event(int64_t stream, int64_t event);
int strata_event_elapsed_ms(int64_t start, int64_t end, float *ms);
/* kind as strata_cuda_memcpy; ordered on stream */
int strata_cuda_memcpy_async(int64_t dst, int64_t src, int64_t bytes, int kind, int64_t stream);
int strata_graph_begin_capture(int64_t stream);
/* Ends the capture on stream and instantiates it: *exec the executable graph, *nodes its kernel/copy nodes.
 * On failure nothing is left captured and *exec is 0. */
int strata_graph_end_capture(int64_t stream, int64_t *exec, int64_t *nodes);
int strata_graph_launch(int64_t exec, int64_t stream);
int strata_graph_destroy(int64_t exec);

/* ---- fused kernels (see docs/cuda-backend.md for the exact math and byte formats) ----------- */
#include "strata_kernels.h"
#include "strata_model_ops.h"
#include "strata_linear.h"

#ifdef __cplusplus
}
#endif
#endif
