// F2: inverse RoPE on the attention output's rope channels (at the query position), then FP8 e4m3
// with one ue8m0 (power-of-two, stored as fp32) scale per 128 channels: the activation quantisation
// that feeds the output projection. One warp per (token, head): each lane owns 16 channels, eight
// lanes make one 128-wide block.
#include <cuda_runtime.h>
#include "numerics.cuh"
#include "strata_cuda.h"

using namespace strata;

namespace {

constexpr int kHead = 512;
constexpr int kNope = 448;
constexpr int kPerLane = 16;
constexpr int kRopeLane0 = kNope / kPerLane;
constexpr int kBlock = 128;
constexpr int kBlocksPerHead = kHead / kBlock;
constexpr int kWarpsPerBlock = 8;
#ifndef STRATA_ROWS_PER_WARP
#define STRATA_ROWS_PER_WARP 1  // rows one warp loads before processing them (tuning knob, see docs)
#endif
#ifndef STRATA_F2_MIN_BLOCKS
#define STRATA_F2_MIN_BLOCKS 1  // blocks per SM the register budget must allow (tuning knob, see docs)
#endif

__device__ __forceinline__ void load16(const uint16_t *p, float *v) {
    uint4 a = reinterpret_cast<const uint4 *>(p)[0];
    uint4 b = reinterpret_cast<const uint4 *>(p)[1];
    uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 8; i++) {
        v[2 * i] = __uint_as_float(w[i] << 16);
        v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

__device__ __forceinline__ void inverse_rope16(float *v, int lane, const float *cs) {
    int pair0 = (lane - kRopeLane0) * (kPerLane / 2);
    float4 c0 = *reinterpret_cast<const float4 *>(cs + pair0), c1 = *reinterpret_cast<const float4 *>(cs + pair0 + 4);
    float4 s0 = *reinterpret_cast<const float4 *>(cs + 32 + pair0), s1 = *reinterpret_cast<const float4 *>(cs + 36 + pair0);
    float c[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
    float s[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int k = 0; k < kPerLane / 2; k++) rope_rotate(v[2 * k], v[2 * k + 1], c[k], -s[k]);
}

// Quantises 16 values with this lane's group-of-8 scale and writes 16 fp8 bytes and (lane%8==0) the scale.
__device__ __forceinline__ void quant16(const float *v, int lane, uint8_t *out, float *scale_out) {
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; i++) amax = fmaxf(amax, fabsf(v[i]));
    amax = group_max<8>(amax);
    float s = fp8_block_scale(amax);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        w[i] = (uint32_t) fp8_encode(v[4 * i], s) | ((uint32_t) fp8_encode(v[4 * i + 1], s) << 8)
             | ((uint32_t) fp8_encode(v[4 * i + 2], s) << 16) | ((uint32_t) fp8_encode(v[4 * i + 3], s) << 24);
    }
    reinterpret_cast<uint4 *>(out)[0] = make_uint4(w[0], w[1], w[2], w[3]);
    if ((lane & 7) == 0) *scale_out = s;
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32, STRATA_F2_MIN_BLOCKS)
f2_fused_kernel(const uint16_t *__restrict__ o, const float *__restrict__ cos_sin,
                uint8_t *__restrict__ out, float *__restrict__ scales, int num_tokens, int num_heads,
                int scale_stride_block, int scale_stride_token) {
    strata_grid_begin();
    int lane = threadIdx.x & 31;
    int64_t total = (int64_t) num_tokens * num_heads;
    int64_t first = ((int64_t) blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5)) * STRATA_ROWS_PER_WARP;
    // all of this warp's rows are loaded before any is processed: more bytes in flight per warp
    float v[STRATA_ROWS_PER_WARP][kPerLane];
#pragma unroll
    for (int r = 0; r < STRATA_ROWS_PER_WARP; r++) {
        if (first + r < total) load16(o + (first + r) * kHead + lane * kPerLane, v[r]);
    }
#pragma unroll
    for (int r = 0; r < STRATA_ROWS_PER_WARP; r++) {
        int64_t row = first + r;
        if (row >= total) return;
        int t = (int) (row / num_heads);
        int h = (int) (row % num_heads);
        if (lane >= kRopeLane0) inverse_rope16(v[r], lane, cos_sin + (int64_t) t * 64);
        int blk = h * kBlocksPerHead + lane / 8;
        quant16(v[r], lane, out + row * kHead + lane * kPerLane,
                scales + (int64_t) blk * scale_stride_block + (int64_t) t * scale_stride_token);
    }
}

// unfused step 2: quantise rows that were already inverse-rotated in place by strata_rope_rows.
__global__ void quant_rows_kernel(const uint16_t *__restrict__ o, uint8_t *__restrict__ out, float *__restrict__ scales,
                                  int num_tokens, int num_heads, int scale_stride_block, int scale_stride_token) {
    strata_grid_begin();
    int lane = threadIdx.x & 31;
    int64_t warp = (int64_t) blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (warp >= (int64_t) num_tokens * num_heads) return;
    int t = (int) (warp / num_heads);
    int h = (int) (warp % num_heads);
    float v[kPerLane];
    load16(o + warp * kHead + lane * kPerLane, v);
    int blk = h * kBlocksPerHead + lane / 8;
    quant16(v, lane, out + warp * kHead + lane * kPerLane,
            scales + (int64_t) blk * scale_stride_block + (int64_t) t * scale_stride_token);
}

}  // namespace


extern "C" {

int64_t strata_f2_workspace_bytes(int num_tokens, int num_heads) {
    return (int64_t) num_tokens * num_heads * kHead * 2 + 256;
}

int strata_f2_inv_rope_fp8_quant(int64_t o, int64_t rope_cos_sin, int64_t out_fp8, int64_t out_scales,
                                 int num_tokens, int num_heads, int scale_stride_block, int scale_stride_token,
                                 int fused, int64_t workspace, int64_t stream) {
    if (num_tokens <= 0) return 0;
    cudaStream_t st = (cudaStream_t) stream;
    int64_t warps = (int64_t) num_tokens * num_heads;
    int blocks = (int) ((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
    if (fused) {
        int64_t warps_needed = (warps + STRATA_ROWS_PER_WARP - 1) / STRATA_ROWS_PER_WARP;
        blocks = (int) ((warps_needed + kWarpsPerBlock - 1) / kWarpsPerBlock);
        strata_launch(f2_fused_kernel, blocks, kWarpsPerBlock * 32, 0, st, (const uint16_t *) o,
            (const float *) rope_cos_sin, (uint8_t *) out_fp8, (float *) out_scales, num_tokens, num_heads,
            scale_stride_block, scale_stride_token);
        STRATA_LAUNCH_CHECK();
        return 0;
    }
    // unfused: inverse rope in place (this baseline overwrites o's rope channels), then quantise
    (void) workspace;
    int rc = strata_rope_rows(o, num_tokens * num_heads, num_heads, rope_cos_sin, 1, stream);
    if (rc) return rc;
    strata_launch(quant_rows_kernel, blocks, kWarpsPerBlock * 32, 0, st, (const uint16_t *) o, (uint8_t *) out_fp8,
        (float *) out_scales, num_tokens, num_heads, scale_stride_block, scale_stride_token);
    STRATA_LAUNCH_CHECK();
    return 0;
}

}  // extern "C"
