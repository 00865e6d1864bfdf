// NCCL bound at run time through dlopen/dlsym (see strata_nccl.h). The NCCL types are declared here with their
// public ABI values, so building needs no NCCL headers and running without NCCL costs nothing until used.
#include <dlfcn.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <cuda_runtime.h>
#include "strata_nccl.h"

namespace {

typedef int nccl_result;                  // ncclResult_t: 0 = ncclSuccess
typedef struct nccl_comm *nccl_comm_t;    // opaque ncclComm_t
struct nccl_unique_id { char bytes[STRATA_NCCL_UNIQUE_ID_BYTES]; };
const int NCCL_FLOAT32 = 7;               // ncclFloat32
const int NCCL_BFLOAT16 = 9;              // ncclBfloat16
const int NCCL_SUM = 0;                   // ncclSum

struct Api {
    nccl_result (*get_version)(int *);
    nccl_result (*get_unique_id)(nccl_unique_id *);
    nccl_result (*comm_init_rank)(nccl_comm_t *, int, nccl_unique_id, int);
    nccl_result (*comm_count)(nccl_comm_t, int *);
    nccl_result (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    nccl_result (*send)(const void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    nccl_result (*recv)(void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    nccl_result (*group_start)();
    nccl_result (*group_end)();
    nccl_result (*comm_destroy)(nccl_comm_t);
    nccl_result (*comm_abort)(nccl_comm_t);
    const char *(*error_string)(nccl_result);
};

Api api;
std::once_flag once;
bool loaded = false;
std::string load_error;

template <typename F>
bool resolve(void *lib, const char *name, F &fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (fn == nullptr) {
        load_error = std::string("libnccl has no symbol ") + name + " (NCCL 2.7 or newer is needed)";
        return false;
    }
    return true;
}

void load_once() {
    const char *path = std::getenv("STRATA_NCCL_LIBRARY");
    if (path == nullptr || *path == 0) path = "libnccl.so.2";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char *why = dlerror();
        load_error = std::string("cannot load ") + path + ": " + (why ? why : "unknown dlopen error")
                     + " (install NCCL 2, or set STRATA_NCCL_LIBRARY to its path)";
        return;
    }
    loaded = resolve(lib, "ncclGetVersion", api.get_version) && resolve(lib, "ncclGetUniqueId", api.get_unique_id)
             && resolve(lib, "ncclCommInitRank", api.comm_init_rank) && resolve(lib, "ncclCommCount", api.comm_count)
             && resolve(lib, "ncclAllReduce", api.all_reduce) && resolve(lib, "ncclSend", api.send)
             && resolve(lib, "ncclRecv", api.recv) && resolve(lib, "ncclGroupStart", api.group_start)
             && resolve(lib, "ncclGroupEnd", api.group_end) && resolve(lib, "ncclCommDestroy", api.comm_destroy)
             && resolve(lib, "ncclCommAbort", api.comm_abort) && resolve(lib, "ncclGetErrorString", api.error_string);
    if (!loaded) dlclose(lib);
}

int nccl_type(int dtype) {
    return dtype == STRATA_NCCL_F32 ? NCCL_FLOAT32 : dtype == STRATA_NCCL_BF16 ? NCCL_BFLOAT16 : -1;
}

size_t elem_bytes(int dtype) { return dtype == STRATA_NCCL_F32 ? 4 : 2; }

nccl_comm_t as_comm(int64_t c) { return reinterpret_cast<nccl_comm_t>(static_cast<intptr_t>(c)); }
cudaStream_t as_stream(int64_t s) { return reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(s)); }

}  // namespace

extern "C" {

int strata_nccl_load(void) {
    std::call_once(once, load_once);
    return loaded ? 0 : STRATA_NCCL_UNAVAILABLE;
}

const char *strata_nccl_load_error(void) {
    strata_nccl_load();
    return load_error.c_str();
}

int strata_nccl_version(int *version) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    return api.get_version(version);
}

int strata_nccl_get_unique_id(char *id) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    nccl_unique_id u;
    int r = api.get_unique_id(&u);
    if (r == 0) std::memcpy(id, u.bytes, STRATA_NCCL_UNIQUE_ID_BYTES);
    return r;
}

int strata_nccl_comm_init_rank(int64_t *comm, int nranks, const char *id, int rank) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    if (nranks < 1 || rank < 0 || rank >= nranks) return STRATA_NCCL_BAD_ARGUMENT;
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    nccl_unique_id u;
    std::memcpy(u.bytes, id, STRATA_NCCL_UNIQUE_ID_BYTES);
    nccl_comm_t c = nullptr;
    int r = api.comm_init_rank(&c, nranks, u, rank);
    *comm = r == 0 ? static_cast<int64_t>(reinterpret_cast<intptr_t>(c)) : 0;
    return r;
}

int strata_nccl_comm_count(int64_t comm, int *count) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    return api.comm_count(as_comm(comm), count);
}

int strata_nccl_all_reduce_sum(int64_t send, int64_t recv, int64_t count, int dtype, int64_t comm, int64_t stream) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    int t = nccl_type(dtype);
    if (t < 0 || count < 0) return STRATA_NCCL_BAD_ARGUMENT;
    return api.all_reduce(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv), (size_t) count, t,
                          NCCL_SUM, as_comm(comm), as_stream(stream));
}

int strata_nccl_all_to_all(int64_t send, const int64_t *send_counts, const int64_t *send_offsets, int64_t recv,
                           const int64_t *recv_counts, const int64_t *recv_offsets, int dtype, int64_t comm,
                           int64_t stream) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    int t = nccl_type(dtype);
    if (t < 0) return STRATA_NCCL_BAD_ARGUMENT;
    int n = 0;
    int r = api.comm_count(as_comm(comm), &n);
    if (r != 0) return r;
    for (int p = 0; p < n; p++) {
        if (send_counts[p] < 0 || recv_counts[p] < 0 || send_offsets[p] < 0 || recv_offsets[p] < 0) {
            return STRATA_NCCL_BAD_ARGUMENT;
        }
    }
    size_t eb = elem_bytes(dtype);
    r = api.group_start();
    if (r != 0) return r;
    int first_error = 0;
    for (int p = 0; p < n && first_error == 0; p++) {
        if (send_counts[p] > 0) {
            first_error = api.send(reinterpret_cast<const char *>(send) + send_offsets[p] * eb,
                                   (size_t) send_counts[p], t, p, as_comm(comm), as_stream(stream));
        }
        if (first_error == 0 && recv_counts[p] > 0) {
            first_error = api.recv(reinterpret_cast<char *>(recv) + recv_offsets[p] * eb, (size_t) recv_counts[p], t,
                                   p, as_comm(comm), as_stream(stream));
        }
    }
    r = api.group_end(); // always close the group, even after a failed enqueue
    return first_error != 0 ? first_error : r;
}

int strata_nccl_comm_destroy(int64_t comm) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    return api.comm_destroy(as_comm(comm));
}

int strata_nccl_comm_abort(int64_t comm) {
    if (strata_nccl_load() != 0) return STRATA_NCCL_UNAVAILABLE;
    return api.comm_abort(as_comm(comm));
}

const char *strata_nccl_error_string(int err) {
    if (err == STRATA_NCCL_UNAVAILABLE) return "NCCL unavailable";
    if (err == STRATA_NCCL_BAD_ARGUMENT) return "bad argument";
    if (strata_nccl_load() != 0) return "NCCL unavailable";
    return api.error_string(err);
}

}  // extern "C"
