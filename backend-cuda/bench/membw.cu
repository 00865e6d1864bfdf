// What read bandwidth the H200 gives the access patterns of the decode GEMMs, with no arithmetic in the way:
// the ceiling a weight-streaming kernel can reach, and how the pattern, the copy depth and the layout of the
// bytes move it. Standalone (no Strata library), one process, one GPU:
//   nvcc -O3 -std=c++17 -arch=sm_90a -o membw backend-cuda/bench/membw.cu && ./membw [reps]
// Patterns (869 MB: the FP4 w1 of 200 experts, 2048 rows of 2048 bytes, as the routed experts at batch 64):
//   copy          cudaMemcpyAsync device to device (bytes read + written over time, as the benchmarks' roofline)
//   linear        every thread streams 16-byte loads, four in flight (the plainest read)
//   rows S=n      the decode kernel's pattern: one CTA of 16 warps per SM, each warp a ring of n stages that
//                 cp.async fills with one 128-byte chunk of each of its 16 rows (rows 2 KB apart), n - 1 ahead
//   ... L2::256B  the same copies asking L2 for the whole 256-byte block (the row's next chunk comes along)
//   tiled S=n     the same, the 16 rows' chunk stored as 2 KB of contiguous bytes (a layout made at load)
//   ... +alu      the same with ~as many integer operations per chunk as the FP4 decode issues
// and the one-token case: six experts' 4.5 MB (27 MB) read linearly, from six places in a 1.1 GB stack or
// from one contiguous range, rotating over 8 such stacks so that L2 (50 MB) does not hold them.
#include <cuda_runtime.h>

#include "bench_timing.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kWarps = 16, kThreads = kWarps * 32;
constexpr int kRowBytes = 2048;  // 4096 FP4 channels
constexpr int kChunks = kRowBytes / 128;
constexpr int kStageRow = 144;
constexpr int kStageBytes = 16 * kStageRow + 128;

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t) __cvta_generic_to_shared(p); }
template <bool PF = false>
__device__ __forceinline__ void cp16(void *dst, const void *src) {
    if constexpr (PF) {  // also asks L2 to fetch the whole 256-byte block around src
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
    } else {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
    }
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__global__ void __launch_bounds__(256) k_linear(const uint4 *p, int64_t n, uint32_t *sink) {
    uint32_t acc = 0;
    const int64_t stride = (int64_t) gridDim.x * blockDim.x;
    int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = __ldcs(p + i + j * stride);
#pragma unroll
        for (int j = 0; j < 4; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
    for (; i < n; i += stride) {
        const uint4 v = __ldcs(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink = acc;  // keeps the loads
}

// Six regions of `bytes` each.
struct Regions {
    const uint4 *p[6];
};
__global__ void __launch_bounds__(256) k_regions(Regions r, int64_t n16, uint32_t *sink) {
    uint32_t acc = 0;
    const int64_t stride = (int64_t) gridDim.x * blockDim.x;
    for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < 6 * n16; i += stride) {
        const int e = (int) (i / n16);
        const uint4 v = __ldcs(r.p[e] + (i - e * n16));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) *sink = acc;
}

// The decode kernel's stream: work item w = (expert, block of 256 rows); warp i of the CTA takes rows
// 16i..16i+15 of the block, every chunk in order, S - 1 chunks ahead. TILED: chunk c of a 16-row group is
// 2 KB of contiguous bytes. ALU: integer work per chunk standing in for the decode.
template <int S, bool TILED, int ALU, bool PF = false>
__global__ void __launch_bounds__(kThreads, 1) k_rows(const uint8_t *w, int items, uint32_t *sink) {
    extern __shared__ __align__(16) unsigned char sm[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned char *ring = sm + warp * S * kStageBytes;
    const int b = (int) ((int64_t) items * blockIdx.x / gridDim.x), e = (int) ((int64_t) items * (blockIdx.x + 1) / gridDim.x);
    const int total = (e - b) * kChunks;
    auto src = [&](int step, int j) -> const uint8_t * {
        const int item = b + step / kChunks, c = step % kChunks;
        const int64_t group = (int64_t) item * kWarps + warp;  // 16-row group
        if (TILED) return w + (group * kChunks + c) * 2048 + (lane >> 3) * 128 + 4 * j * 128 + (lane & 7) * 16;
        return w + (group * 16 + (lane >> 3) + 4 * j) * (int64_t) kRowBytes + c * 128 + (lane & 7) * 16;
    };
    auto fetch = [&](int step) {
        if (step < total) {
            unsigned char *dst = ring + (step % S) * kStageBytes + (lane >> 3) * kStageRow + (lane & 7) * 16;
#pragma unroll
            for (int j = 0; j < 4; j++) cp16<PF>(dst + 4 * j * kStageRow, src(step, j));
        }
        commit();
    };
    uint32_t acc = lane;
    for (int i = 0; i < S - 1; i++) fetch(i);
    for (int step = 0; step < total; step++) {
        fetch(step + S - 1);
        wait_group<S - 1>();
        __syncwarp();
        const unsigned char *st = ring + (step % S) * kStageBytes;
        const uint4 v = *reinterpret_cast<const uint4 *>(st + (lane & 15) * kStageRow + (lane >> 4) * 16);
        uint32_t x = v.x ^ v.y ^ v.z ^ v.w;
#pragma unroll
        for (int k = 0; k < ALU; k++) x = (x >> 3) ^ (x << 5) ^ (uint32_t) k;
        acc += x;
        __syncwarp();
    }
    if (acc == 0x12345678u) *sink = acc;
}

template <int S, bool TILED, int ALU, bool PF = false>
void rows(const char *name, const uint8_t *w, int items, int64_t bytes, int sms, uint32_t *sink, int reps, double copy_gbs) {
    const int smem = kWarps * S * kStageBytes;
    CK(cudaFuncSetAttribute(k_rows<S, TILED, ALU, PF>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const float us = median_us(reps, [&](int) { k_rows<S, TILED, ALU, PF><<<sms, kThreads, smem>>>(w, items, sink); });
    printf("%-22s %9.1f us  %7.0f GB/s  %5.1f%% of copy\n", name, us, bytes / us / 1e3, 100.0 * bytes / us / 1e3 / copy_gbs);
}

}  // namespace

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 20;
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int experts = 200, items = experts * 8;  // 8 blocks of 256 rows per 2048-row expert
    const int64_t bytes = (int64_t) experts * 2048 * kRowBytes;
    uint8_t *w, *w2;
    uint32_t *sink;
    CK(cudaMalloc(&w, bytes));
    CK(cudaMalloc(&w2, bytes));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(w, 1, bytes));
    CK(cudaMemset(w2, 2, bytes));
    const float cus = median_us(reps, [&](int) { CK(cudaMemcpyAsync(w2, w, bytes, cudaMemcpyDeviceToDevice)); });
    const double copy_gbs = 2.0 * bytes / cus / 1e3;
    printf("%-22s %9.1f us  %7.0f GB/s  (read + write)\n", "copy", cus, copy_gbs);
    const float lus = median_us(reps, [&](int) { k_linear<<<sms * 8, 256>>>(reinterpret_cast<const uint4 *>(w), bytes / 16, sink); });
    printf("%-22s %9.1f us  %7.0f GB/s  %5.1f%% of copy\n", "linear", lus, bytes / lus / 1e3, 100.0 * bytes / lus / 1e3 / copy_gbs);
    rows<2, false, 0>("rows S=2", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<3, false, 0>("rows S=3", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<4, false, 0>("rows S=4", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<5, false, 0>("rows S=5", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<3, false, 0, true>("rows S=3 L2::256B", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<4, false, 0, true>("rows S=4 L2::256B", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<3, true, 0>("tiled S=3", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<4, true, 0>("tiled S=4", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<3, false, 96>("rows S=3 +alu", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<4, false, 96>("rows S=4 +alu", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<3, true, 96>("tiled S=3 +alu", w, items, bytes, sms, sink, reps, copy_gbs);
    rows<4, true, 96>("tiled S=4 +alu", w, items, bytes, sms, sink, reps, copy_gbs);
    CK(cudaFree(w2));
    CK(cudaFree(w));

    // one token: six experts' w1 + scales, 4.5 MB each, in a stack of 256 (1.15 GB); 8 stacks (layers)
    const int64_t ebytes = 4718592, stack = 256 * ebytes;
    uint8_t *s;
    CK(cudaMalloc(&s, 8 * stack));
    CK(cudaMemset(s, 3, 8 * stack));
    srand(7);
    std::vector<Regions> spread(8), packed(8);
    for (int l = 0; l < 8; l++) {
        for (int i = 0; i < 6; i++) {
            spread[l].p[i] = reinterpret_cast<const uint4 *>(s + l * stack + (int64_t) (rand() % 256) * ebytes);
            packed[l].p[i] = reinterpret_cast<const uint4 *>(s + l * stack + (int64_t) i * ebytes);
        }
    }
    for (int ctas : {sms, sms * 4, sms * 8}) {
        const float a = median_us(reps * 4, [&](int r) { k_regions<<<ctas, 256>>>(spread[r % 8], ebytes / 16, sink); });
        const float c = median_us(reps * 4, [&](int r) { k_regions<<<ctas, 256>>>(packed[r % 8], ebytes / 16, sink); });
        printf("27 MB, %4d CTAs: six places %6.1f us (%5.0f GB/s), contiguous %6.1f us (%5.0f GB/s)\n", ctas, a,
               6 * ebytes / a / 1e3, c, 6 * ebytes / c / 1e3);
    }
    // back to back in one stream, as a step issues them: 8 layers' worth, per GEMM
    for (int ctas : {sms, sms * 8}) {
        const float a = median_us(reps, [&](int) {
            for (int l = 0; l < 8; l++) k_regions<<<ctas, 256>>>(spread[l], ebytes / 16, sink);
        });
        printf("27 MB x 8 back to back, %4d CTAs: %6.1f us per GEMM\n", ctas, a / 8);
    }
    CK(cudaFree(s));
    return 0;
}
