// How long one kernel takes to read a decode GEMM's weights (4 to 100 MB) on this GPU, by how many bytes each
// SM keeps in flight: grid-stride 16-byte loads (one per thread at a time), U independent 16-byte loads per
// thread before any is used, and the copy engine filling a ring of shared-memory stages (one bulk copy per
// stage, one thread issuing). Each size is timed alone (events around one launch) and as 8 launches back to back
// (per launch), rotating over buffers that together exceed L2 so every read comes from HBM. No Strata code.
//   nvcc -O3 -std=c++17 -arch=sm_90a -o readdepth backend-cuda/bench/readdepth.cu && ./readdepth
#include <cuda_runtime.h>

#include "bench_timing.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__global__ void __launch_bounds__(256) k_stride(const uint4 *p, int64_t n, uint32_t *sink) {
    uint32_t acc = 0;
    const int64_t stride = (int64_t) gridDim.x * blockDim.x;
    for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc ^= fold(__ldcs(p + i));
    if (acc == 0x12345678u) *sink = acc;
}

// Each CTA reads a contiguous share, every thread U loads deep.
template <int U>
__global__ void __launch_bounds__(256) k_deep(const uint4 *p, int64_t n, uint32_t *sink) {
    const int64_t per = (n + gridDim.x - 1) / gridDim.x, b = blockIdx.x * per, e = min(n, b + per);
    uint32_t acc = 0;
    for (int64_t i = b + threadIdx.x; i < e; i += (int64_t) U * blockDim.x) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t j = i + (int64_t) u * blockDim.x;
            v[u] = j < e ? __ldcs(p + j) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; u++) acc ^= fold(v[u]);
    }
    if (acc == 0x12345678u) *sink = acc;
}

__device__ __forceinline__ uint32_t saddr(const void *q) { return (uint32_t) __cvta_generic_to_shared(q); }

// The copy engine streams the CTA's share through S stages of CH bytes; thread 0 issues, all threads read.
template <int S, int CH>
__global__ void __launch_bounds__(256, 1) k_bulk(const uint8_t *p, int64_t bytes, uint32_t *sink) {
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ __align__(8) uint64_t full[S];
    const int64_t per = ((bytes + gridDim.x - 1) / gridDim.x + CH - 1) / CH * CH;
    const int64_t b = blockIdx.x * per, e = min(bytes, b + per);
    const int chunks = e > b ? (int) ((e - b + CH - 1) / CH) : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(saddr(&full[s])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int c) {
        const int s = c % S;
        const uint32_t n = (uint32_t) min((int64_t) CH, e - (b + (int64_t) c * CH));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(saddr(&full[s])), "r"(n) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                     ::"r"(saddr(sm + (size_t) s * CH)), "l"(p + b + (int64_t) c * CH), "r"(n), "r"(saddr(&full[s]))
                     : "memory");
    };
    if (threadIdx.x == 0)
        for (int c = 0; c < min(S, chunks); c++) issue(c);
    uint32_t acc = 0;
    for (int c = 0; c < chunks; c++) {
        const int s = c % S;
        const uint32_t parity = (c / S) & 1;
        uint32_t done = 0;
        do {
            asm volatile("{\n .reg .pred q;\n mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2;\n selp.u32 %0, 1, 0, q;\n}\n"
                         : "=r"(done) : "r"(saddr(&full[s])), "r"(parity) : "memory");
        } while (!done);
        const uint4 *st = reinterpret_cast<const uint4 *>(sm + (size_t) s * CH);
        for (int i = threadIdx.x; i < CH / 16; i += 256) acc ^= fold(st[i]);
        __syncthreads();  // the stage is read: it may be refilled
        if (threadIdx.x == 0 && c + S < chunks) issue(c + S);
    }
    if (acc == 0x12345678u) *sink = acc;
}

}  // namespace

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 20;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t pool = 1200ll << 20;  // rotated over, far more than L2
    uint8_t *buf;
    uint32_t *sink;
    CK(cudaMalloc(&buf, pool));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(buf, 1, pool));
    CK(cudaFuncSetAttribute(k_bulk<4, 32768>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 32768));
    CK(cudaFuncSetAttribute(k_bulk<6, 32768>, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * 32768));
    CK(cudaFuncSetAttribute(k_bulk<8, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * 16384));
    CK(cudaFuncSetAttribute(k_bulk<4, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 16384));
    printf("%d SMs; us per launch: alone (events around one) / 8 back to back (per launch); GB/s of the latter\n", sms);
    for (int64_t mb : {4, 8, 16, 27, 34, 50, 100}) {
        const int64_t bytes = mb << 20, n16 = bytes / 16;
        const int slots = (int) (pool / bytes);
        int next = 0;
        auto at = [&]() { const uint8_t *q = buf + (int64_t) (next++ % slots) * bytes; return q; };
        auto report = [&](const char *name, auto one) {
            const float alone = median_us(reps, [&](int) { one(at()); });
            const float b2b = median_us(reps, [&](int) { for (int l = 0; l < 8; l++) one(at()); }) / 8;
            printf("%4lld MB  %-28s %7.1f / %7.1f us  %6.0f GB/s\n", (long long) mb, name, alone, b2b, bytes / b2b / 1e3);
        };
        for (int per : {4, 8}) {
            char name[64];
            snprintf(name, sizeof name, "stride, %d CTAs/SM", per);
            report(name, [&](const uint8_t *q) { k_stride<<<sms * per, 256>>>((const uint4 *) q, n16, sink); });
        }
        for (int per : {2, 4}) {
            char name[64];
            snprintf(name, sizeof name, "deep U=4, %d CTAs/SM", per);
            report(name, [&](const uint8_t *q) { k_deep<4><<<sms * per, 256>>>((const uint4 *) q, n16, sink); });
            snprintf(name, sizeof name, "deep U=8, %d CTAs/SM", per);
            report(name, [&](const uint8_t *q) { k_deep<8><<<sms * per, 256>>>((const uint4 *) q, n16, sink); });
            snprintf(name, sizeof name, "deep U=16, %d CTAs/SM", per);
            report(name, [&](const uint8_t *q) { k_deep<16><<<sms * per, 256>>>((const uint4 *) q, n16, sink); });
        }
        report("bulk 4 x 32 KB, 1 CTA/SM", [&](const uint8_t *q) { k_bulk<4, 32768><<<sms, 256, 4 * 32768>>>(q, bytes, sink); });
        report("bulk 6 x 32 KB, 1 CTA/SM", [&](const uint8_t *q) { k_bulk<6, 32768><<<sms, 256, 6 * 32768>>>(q, bytes, sink); });
        report("bulk 8 x 16 KB, 1 CTA/SM", [&](const uint8_t *q) { k_bulk<8, 16384><<<sms, 256, 8 * 16384>>>(q, bytes, sink); });
        report("bulk 4 x 16 KB, 2 CTAs/SM", [&](const uint8_t *q) { k_bulk<4, 16384><<<2 * sms, 256, 4 * 16384>>>(q, bytes, sink); });
    }
    CK(cudaFree(buf));
    CK(cudaFree(sink));
    return 0;
}
