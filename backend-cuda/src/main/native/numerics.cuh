// Number formats and rounding exactly as the CPU backend (io.strata.backend.cpu.ops) and the
// DeepSeek reference define them. Every multiply/add that the reference rounds separately is written
// with __fmul_rn/__fadd_rn so nvcc cannot contract it into an FMA (which would round once, not twice).
#pragma once
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace strata {

constexpr float kE4m3Max = 448.f;
constexpr float kE2m1Max = 6.f;

__device__ __forceinline__ float bf16_round(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) { return __uint_as_float(((uint32_t) b) << 16); }

__device__ __forceinline__ uint16_t float_to_bf16_bits(float x) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    return *reinterpret_cast<uint16_t *>(&h);
}

// 2^ceil(log2(r)) for a positive normal r: the ue8m0 scale the reference uses.
__device__ __forceinline__ float pow2_ceil(float r) {
    uint32_t bits = __float_as_uint(r);
    uint32_t e = (bits >> 23) & 0xff;
    if (bits & 0x7fffff) e++;
    return __uint_as_float(e << 23);
}

// FP8 block scale: amax clamped to 1e-4, s = 2^ceil(log2(amax / 448)).
__device__ __forceinline__ float fp8_block_scale(float amax) {
    return pow2_ceil(__fdiv_rn(fmaxf(amax, 1e-4f), kE4m3Max));
}

// FP4 block scale: amax clamped to 6 * 2^-126, s = 2^ceil(log2(amax / 6)).
__device__ __forceinline__ float fp4_block_scale(float amax) {
    return pow2_ceil(__fdiv_rn(fmaxf(amax, 6.f * 1.17549435e-38f), kE2m1Max));
}

__device__ __forceinline__ uint8_t e8m0_byte(float pow2) { return (uint8_t) ((__float_as_uint(pow2) >> 23) & 0xff); }

// e4m3fn byte of clamp(x / s, +-448), round to nearest even (hardware cvt, saturating).
__device__ __forceinline__ uint8_t fp8_encode(float x, float s) {
    float q = fminf(fmaxf(__fdiv_rn(x, s), -kE4m3Max), kE4m3Max);
    return (uint8_t) __nv_cvt_float_to_fp8(q, __NV_SATFINITE, __NV_E4M3);
}

// x FP8-round-tripped with its block's scale s (ActivationQuant.fp8RoundTrip): exactly an e4m3 value times a power
// of two, so exact in bf16. Round-tripping such values again (amax recomputed from them) returns them unchanged: the
// scale stays or halves, and every e4m3 value up to 224 times a power of two up to the new scale is an e4m3 value.
__device__ __forceinline__ float fp8_roundtrip(float x, float s) {
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t) fp8_encode(x, s), __NV_E4M3);
    return __half2float(__half(h)) * s;
}

// e2m1 code of clamp(x / s, +-6): nearest value, ties to the even code (0.25->0, 0.75->1, 2.5->2, 5->4).
__device__ __forceinline__ uint8_t fp4_encode(float x, float s) {
    float q = fminf(fmaxf(__fdiv_rn(x, s), -kE2m1Max), kE2m1Max);
    float a = fabsf(q);
    uint8_t code;
    if (a < 2.f) {
        code = (uint8_t) rintf(a * 2.f);          // 0, .5, 1, 1.5 -> codes 0..3 (2.0 -> 4)
    } else if (a < 4.f) {
        code = (uint8_t) (rintf(a) + 2.f);        // 2 -> 4, 3 -> 5, 4 -> 6
    } else {
        float r = rintf(a * 0.5f) * 2.f;          // 4 -> 6, 6 -> 7
        code = r >= 6.f ? 7 : 6;
    }
    return (uint8_t) (code | (signbit(q) ? 8 : 0));
}

// RoPE angles come precomputed per token: row [cos(a_0..a_31) | sin(a_0..a_31)] in fp32, where
// a_i = fp32(pos) * freq_i in fp32 and cos/sin are correctly rounded (the engine fills the step's rows
// the way the reference fills its complex64 table). A table keeps double-precision trig (and its slow
// range-reduction path for large positions) off the GPU: the kernels stay memory-bound.
__device__ __forceinline__ void rope_cs(const float *row, int i, float &c, float &s) {
    c = row[i];
    s = row[32 + i];
}

// (re, im) <- bf16(re*c - im*s), bf16(re*s + im*c); inverse uses -s.
__device__ __forceinline__ void rope_rotate(float &re, float &im, float c, float s) {
    float r0 = __fsub_rn(__fmul_rn(re, c), __fmul_rn(im, s));
    float r1 = __fadd_rn(__fmul_rn(re, s), __fmul_rn(im, c));
    re = bf16_round(r0);
    im = bf16_round(r1);
}

template <int kWidth>
__device__ __forceinline__ float group_max(float v) {
#pragma unroll
    for (int m = kWidth / 2; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
    return v;
}

template <int kWidth>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
    for (int m = kWidth / 2; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// Eight bf16 values (16 bytes, low half first) as floats.
__device__ __forceinline__ void bf16x8_to_float(uint4 v, float *f) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = __uint_as_float(w[i] << 16);
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

// Four bf16 values (8 bytes, low half first) as floats.
__device__ __forceinline__ void bf16x4_to_float(uint2 raw, float (&v)[4]) {
    v[0] = __uint_as_float(raw.x << 16);
    v[1] = __uint_as_float(raw.x & 0xffff0000u);
    v[2] = __uint_as_float(raw.y << 16);
    v[3] = __uint_as_float(raw.y & 0xffff0000u);
}

// The largest magnitude of a warp's 128 channels, 4 per lane; every lane gets it.
__device__ __forceinline__ float warp_amax128(const float (&v)[4]) {
    return group_max<32>(fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3]))));
}

// In place, a lane's 4 channels FP8-round-tripped with their block's scale s (ActivationQuant): exactly an e4m3
// value times a power of two.
__device__ __forceinline__ void fp8_roundtrip4(float (&v)[4], float s) {
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = fp8_roundtrip(v[i], s);
}

// Where one cache entry lives: page base + entry * data_stride for the values, page base + scale_base +
// entry * scale_stride for the ue8m0 bytes. Covers both the split FlashMLA page (data 576-strided,
// scales after all entries) and a packed 584-byte entry (data_stride 584, scale_base 576, scale_stride 584).
struct EntryLayout {
    uint8_t *pool;
    int64_t page_bytes;
    int entries_per_page;
    int data_stride;
    int scale_base;
    int scale_stride;

    __device__ __forceinline__ uint8_t *page(int64_t slot) const {
        return pool + (slot / entries_per_page) * page_bytes;
    }
    __device__ __forceinline__ uint8_t *data(int64_t slot) const {
        return page(slot) + (int64_t) (slot % entries_per_page) * data_stride;
    }
    __device__ __forceinline__ uint8_t *scales(int64_t slot) const {
        return page(slot) + scale_base + (int64_t) (slot % entries_per_page) * scale_stride;
    }
    // The same for a slot below 2^32 with 32-bit division (64-bit division is a long subroutine).
    __device__ __forceinline__ uint8_t *data32(uint32_t slot) const {
        uint32_t pg = slot / (uint32_t) entries_per_page, e = slot - pg * (uint32_t) entries_per_page;
        return pool + (int64_t) pg * page_bytes + (int64_t) e * data_stride;
    }
    __device__ __forceinline__ uint8_t *scales32(uint32_t slot) const {
        uint32_t pg = slot / (uint32_t) entries_per_page, e = slot - pg * (uint32_t) entries_per_page;
        return pool + (int64_t) pg * page_bytes + scale_base + (int64_t) e * scale_stride;
    }
};

// RoPE of the four channels c..c+3 a thread holds, if they lie in the last 64 of an HD-wide row
template <int HD>
__device__ __forceinline__ void rope4(float *x, int c, const float *cs_row) {
    if (c < HD - 64) return;
    int pair = (c - (HD - 64)) / 2;
#pragma unroll
    for (int k = 0; k < 2; k++) {
        float cs, sn;
        rope_cs(cs_row, pair + k, cs, sn);
        rope_rotate(x[2 * k], x[2 * k + 1], cs, sn);
    }
}

// Walsh-Hadamard over 128 channels held 4 per lane by one warp, same butterfly order as the CPU
// backend (h = 1, 2, 4, ..., 64), then bf16(x * 128^-0.5).
__device__ __forceinline__ void hadamard128(float *x, int lane) {
    float a0 = x[0], a1 = x[1], a2 = x[2], a3 = x[3];
    float b0 = __fadd_rn(a0, a1), b1 = __fsub_rn(a0, a1), b2 = __fadd_rn(a2, a3), b3 = __fsub_rn(a2, a3);  // h = 1
    x[0] = __fadd_rn(b0, b2); x[2] = __fsub_rn(b0, b2); x[1] = __fadd_rn(b1, b3); x[3] = __fsub_rn(b1, b3);  // h = 2
#pragma unroll
    for (int m = 1; m < 32; m <<= 1) {  // h = 4 * m
        bool upper = (lane & m) != 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float other = __shfl_xor_sync(0xffffffffu, x[i], m);
            x[i] = upper ? __fsub_rn(other, x[i]) : __fadd_rn(x[i], other);
        }
    }
    const float scale = 0.088388347648318440f;  // 128^-0.5 rounded to fp32
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = bf16_round(__fmul_rn(x[i], scale));
}

// A window kind's block table row (StepPlan.Table): column 0 holds the row's first virtual page, then its
// pages from there; -1 (or outside the row) = unmapped.
__device__ __forceinline__ int window_table_page(const int *table, int stride, int row, int vpage) {
    const int *r = table + (int64_t) row * stride;
    const int i = vpage - r[0];
    return i >= 0 && i < stride - 1 ? r[1 + i] : -1;
}

}  // namespace strata

// Multiprocessors of the current device, for launch shapes that size grids to the GPU (132 if unknown).
inline int strata_sm_count() {
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms;
}

// A launch configuration with no attributes yet; attrs is where they go (it must outlive the configuration's use
// and have room for every attribute added).
inline cudaLaunchConfig_t strata_launch_config(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                               cudaLaunchAttribute *attrs) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attrs;
    cfg.numAttrs = 0;
    return cfg;
}

// A launch configuration with thread-block clusters of cluster_x CTAs along x, as strata_launch_config.
inline cudaLaunchConfig_t strata_cluster_config(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                                unsigned cluster_x, cudaLaunchAttribute *attrs) {
    cudaLaunchConfig_t cfg = strata_launch_config(grid, block, smem, stream, attrs);
    cudaLaunchAttribute &a = attrs[cfg.numAttrs++];
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = cluster_x;
    a.val.clusterDim.y = 1;
    a.val.clusterDim.z = 1;
    return cfg;
}

// ---- Programmatic dependent launch ---------------------------------------------------------------------------
// A decode step is hundreds of kernels in a row, most of a few microseconds, each waiting for the one before it.
// Launched with programmatic stream serialization, a kernel may start while the kernel before it in its stream
// still runs: its CTAs get resident as the other's leave, and each thread waits in strata_grid_begin until that
// kernel has completed and its writes are visible — so the launch and the CTAs' start overlap the other's tail
// instead of following it. Every kernel calls strata_grid_begin first, before it touches global memory (a
// kernel launched without the attribute does not wait there), so each kernel still sees every write made
// before it in stream order (the kernel before it waited for its own predecessor before completing). The
// trigger right after the wait lets the next kernel launch only once every CTA of this one has started and
// its predecessor has completed: at most one kernel waits ahead, never holding resources this one still
// needs. STRATA_PDL=0 launches without the attribute (A/B measurements). Read once.
__device__ __forceinline__ void strata_grid_begin() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

inline bool strata_pdl_enabled() {
    static const bool enabled = [] {
        const char *e = getenv("STRATA_PDL");
        int dev = 0, major = 0;
        return !(e != nullptr && strcmp(e, "0") == 0) && cudaGetDevice(&dev) == cudaSuccess
               && cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
    }();
    return enabled;
}

// Adds the programmatic-serialization attribute to cfg (its attrs have room for it) when enabled, on a created
// stream.
inline void strata_pdl_attr(cudaLaunchConfig_t &cfg) {
    if (cfg.stream == nullptr || !strata_pdl_enabled()) return;
    cudaLaunchAttribute &a = cfg.attrs[cfg.numAttrs++];
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
}

// Launches kernel on stream (a programmatic dependent launch where strata_pdl_attr allows it).
template <typename... Params, typename... Args>
cudaError_t strata_launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          Args &&...args) {
    cudaLaunchAttribute attrs[1];
    cudaLaunchConfig_t cfg = strata_launch_config(grid, block, smem, stream, attrs);
    strata_pdl_attr(cfg);
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// Launches kernel over grid with thread-block clusters of cluster_x CTAs along x (grid.x a multiple of it), as
// strata_launch.
template <typename... Params, typename... Args>
cudaError_t strata_launch_cluster(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                  unsigned cluster_x, Args &&...args) {
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t cfg = strata_cluster_config(grid, block, smem, stream, cluster_x, attrs);
    strata_pdl_attr(cfg);
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

#define STRATA_LAUNCH_CHECK() \
    do { cudaError_t _e = cudaGetLastError(); if (_e != cudaSuccess) return (int) _e; } while (0)
