// Probe, memory and copies. cudart is linked statically, so on a host without a driver every call
// returns cudaErrorInsufficientDriver (35) instead of failing to load.
#include <cuda_runtime.h>
#include <cstring>
#include "strata_cuda.h"

extern "C" {

int strata_cuda_device_count(int *count) {
    *count = 0;
    return (int) cudaGetDeviceCount(count);
}

const char *strata_cuda_error_string(int err) { return cudaGetErrorString((cudaError_t) err); }

const char *strata_cuda_error_name(int err) { return cudaGetErrorName((cudaError_t) err); }

int strata_cuda_device_info(int device, char *name, int name_len, int64_t *total_bytes,
                            int64_t *free_bytes, int *cc_major, int *cc_minor, int *sm_count,
                            int *driver_version, int *runtime_version) {
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) return (int) e;
    if (name_len > 0) {
        std::strncpy(name, p.name, (size_t) name_len - 1);
        name[name_len - 1] = 0;
    }
    *cc_major = p.major;
    *cc_minor = p.minor;
    *sm_count = p.multiProcessorCount;
    if ((e = cudaDriverGetVersion(driver_version)) != cudaSuccess) return (int) e;
    if ((e = cudaRuntimeGetVersion(runtime_version)) != cudaSuccess) return (int) e;
    int previous = 0;
    if ((e = cudaGetDevice(&previous)) != cudaSuccess) return (int) e;
    if ((e = cudaSetDevice(device)) != cudaSuccess) return (int) e;
    size_t f = 0, t = 0;
    e = cudaMemGetInfo(&f, &t);
    cudaSetDevice(previous);
    if (e != cudaSuccess) return (int) e;
    *total_bytes = (int64_t) t;
    *free_bytes = (int64_t) f;
    return 0;
}

int strata_cuda_set_device(int device) { return (int) cudaSetDevice(device); }

int strata_cuda_mem_info(int64_t *free_bytes, int64_t *total_bytes) {
    size_t f = 0, t = 0;
    cudaError_t e = cudaMemGetInfo(&f, &t);
    *free_bytes = (int64_t) f;
    *total_bytes = (int64_t) t;
    return (int) e;
}

int strata_cuda_malloc(int64_t bytes, int64_t *device_ptr) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, (size_t) bytes);
    *device_ptr = (int64_t) (intptr_t) p;
    return (int) e;
}

int strata_cuda_free(int64_t device_ptr) { return (int) cudaFree((void *) (intptr_t) device_ptr); }

int strata_cuda_malloc_host(int64_t bytes, int64_t *host_ptr) {
    void *p = nullptr;
    cudaError_t e = cudaMallocHost(&p, (size_t) bytes);
    *host_ptr = (int64_t) (intptr_t) p;
    return (int) e;
}

int strata_cuda_free_host(int64_t host_ptr) { return (int) cudaFreeHost((void *) (intptr_t) host_ptr); }

int strata_cuda_memcpy(int64_t dst, int64_t src, int64_t bytes, int kind) {
    cudaMemcpyKind k = kind == 1 ? cudaMemcpyHostToDevice
                     : kind == 2 ? cudaMemcpyDeviceToHost
                     : kind == 3 ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault;
    return (int) cudaMemcpy((void *) (intptr_t) dst, (const void *) (intptr_t) src, (size_t) bytes, k);
}

int strata_cuda_memset(int64_t dst, int value, int64_t bytes) {
    return (int) cudaMemset((void *) (intptr_t) dst, value, (size_t) bytes);
}

int strata_cuda_synchronize(void) { return (int) cudaDeviceSynchronize(); }

int strata_cuda_clear_error(void) { return (int) cudaGetLastError(); }

static cudaStream_t as_stream(int64_t s) { return (cudaStream_t) (intptr_t) s; }
static cudaEvent_t as_event(int64_t e) { return (cudaEvent_t) (intptr_t) e; }

int strata_stream_create(int64_t *stream) {
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    *stream = (int64_t) (intptr_t) s;
    return (int) e;
}

int strata_stream_destroy(int64_t stream) { return (int) cudaStreamDestroy(as_stream(stream)); }

int strata_stream_synchronize(int64_t stream) { return (int) cudaStreamSynchronize(as_stream(stream)); }

int strata_event_create(int timed, int64_t *event) {
    cudaEvent_t ev = nullptr;
    cudaError_t e = cudaEventCreateWithFlags(&ev, timed ? cudaEventDefault : cudaEventDisableTiming);
    *event = (int64_t) (intptr_t) ev;
    return (int) e;
}

int strata_event_destroy(int64_t event) { return (int) cudaEventDestroy(as_event(event)); }

int strata_event_record(int64_t event, int64_t stream) {
    return (int) cudaEventRecord(as_event(event), as_stream(stream));
}

int strata_stream_wait_event(int64_t stream, int64_t event) {
    return (int) cudaStreamWaitEvent(as_stream(stream), as_event(event), 0);
}

int strata_event_elapsed_ms(int64_t start, int64_t end, float *ms) {
    cudaError_t e = cudaEventSynchronize(as_event(end));
    if (e != cudaSuccess) return (int) e;
    return (int) cudaEventElapsedTime(ms, as_event(start), as_event(end));
}

int strata_cuda_memcpy_async(int64_t dst, int64_t src, int64_t bytes, int kind, int64_t stream) {
    cudaMemcpyKind k = kind == 1 ? cudaMemcpyHostToDevice
                     : kind == 2 ? cudaMemcpyDeviceToHost
                     : kind == 3 ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault;
    return (int) cudaMemcpyAsync((void *) (intptr_t) dst, (const void *) (intptr_t) src, (size_t) bytes, k,
                                 as_stream(stream));
}

int strata_graph_begin_capture(int64_t stream) {
    return (int) cudaStreamBeginCapture(as_stream(stream), cudaStreamCaptureModeThreadLocal);
}

int strata_graph_end_capture(int64_t stream, int64_t *exec, int64_t *nodes) {
    *exec = 0;
    *nodes = 0;
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaStreamEndCapture(as_stream(stream), &graph);
    if (e != cudaSuccess) {
        if (graph != nullptr) cudaGraphDestroy(graph);
        return (int) e;
    }
    size_t n = 0;
    cudaGraphGetNodes(graph, nullptr, &n);
    cudaGraphExec_t ge = nullptr;
    e = cudaGraphInstantiate(&ge, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) return (int) e;
    *exec = (int64_t) (intptr_t) ge;
    *nodes = (int64_t) n;
    return 0;
}

int strata_graph_launch(int64_t exec, int64_t stream) {
    return (int) cudaGraphLaunch((cudaGraphExec_t) (intptr_t) exec, as_stream(stream));
}

int strata_graph_destroy(int64_t exec) { return (int) cudaGraphExecDestroy((cudaGraphExec_t) (intptr_t) exec); }

}  // extern "C"
