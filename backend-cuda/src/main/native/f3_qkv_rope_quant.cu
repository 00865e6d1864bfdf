// F3: Q per-head RMSNorm (no weight, bf16 arithmetic) + Q RoPE, KV RoPE + FP8 quantisation + SWA
// insert, horizontally fused: one warp per (token, head-slot); slots 0..H-1 are query heads, slot H is
// the shared KV head. Static dispatch by warp index, so no warp ever waits on another.
//
// Head layout (512 channels): [0, 448) no-rope, [448, 512) rope, interleaved pairs. Each lane owns 16
// consecutive channels; lanes 28..31 hold the rope part, and four lanes make one 64-wide quant block.
#include <cuda_runtime.h>
#include "numerics.cuh"
#include "strata_cuda.h"

using namespace strata;

namespace {

constexpr int kHead = 512;
constexpr int kNope = 448;
constexpr int kPerLane = 16;
constexpr int kRopeLane0 = kNope / kPerLane;  // 28
constexpr int kWarpsPerBlock = 8;
#ifndef STRATA_ROWS_PER_WARP
#define STRATA_ROWS_PER_WARP 1  // rows one warp loads before processing them (tuning knob, see docs)
#endif
#ifndef STRATA_F3_MIN_BLOCKS
#define STRATA_F3_MIN_BLOCKS 1  // blocks per SM the register budget must allow (tuning knob, see docs)
#endif

struct Row16 {
    float v[kPerLane];
};

__device__ __forceinline__ Row16 load_row16(const uint16_t *p) {
    uint4 a = reinterpret_cast<const uint4 *>(p)[0];
    uint4 b = reinterpret_cast<const uint4 *>(p)[1];
    uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    Row16 r;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        r.v[2 * i] = __uint_as_float(w[i] << 16);
        r.v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
    return r;
}

__device__ __forceinline__ void store_row16(uint16_t *p, const Row16 &r) {
    uint32_t w[8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        w[i] = (uint32_t) float_to_bf16_bits(r.v[2 * i]) | ((uint32_t) float_to_bf16_bits(r.v[2 * i + 1]) << 16);
    }
    reinterpret_cast<uint4 *>(p)[0] = make_uint4(w[0], w[1], w[2], w[3]);
    reinterpret_cast<uint4 *>(p)[1] = make_uint4(w[4], w[5], w[6], w[7]);
}

// Same, with 8-byte stores (cache entries are 8-byte aligned, not 16).
__device__ __forceinline__ void store_row16_8(uint16_t *p, const Row16 &r) {
    uint2 *d = reinterpret_cast<uint2 *>(p);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        d[i] = make_uint2((uint32_t) float_to_bf16_bits(r.v[4 * i]) | ((uint32_t) float_to_bf16_bits(r.v[4 * i + 1]) << 16),
                          (uint32_t) float_to_bf16_bits(r.v[4 * i + 2]) | ((uint32_t) float_to_bf16_bits(r.v[4 * i + 3]) << 16));
    }
}

// The reference's q *= rsqrt(mean(q^2) + eps) on a bf16 tensor: every intermediate rounded to bf16.
__device__ __forceinline__ void head_norm_bf16(Row16 &r, float eps) {
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; i++) ss += bf16_round(__fmul_rn(r.v[i], r.v[i]));
    ss = group_sum<32>(ss);
    float mean = bf16_round(__fdiv_rn(ss, (float) kHead));
    float inv = bf16_round((float) (1.0 / sqrt((double) bf16_round(__fadd_rn(mean, eps)))));
#pragma unroll
    for (int i = 0; i < kPerLane; i++) r.v[i] = bf16_round(__fmul_rn(r.v[i], inv));
}

// RoPE on this lane's 8 pairs (lanes 28..31 only).
__device__ __forceinline__ void rope_lane(Row16 &r, int lane, const float *cs, bool inverse) {
    int pair0 = (lane - kRopeLane0) * (kPerLane / 2);
    float4 c0 = *reinterpret_cast<const float4 *>(cs + pair0), c1 = *reinterpret_cast<const float4 *>(cs + pair0 + 4);
    float4 s0 = *reinterpret_cast<const float4 *>(cs + 32 + pair0), s1 = *reinterpret_cast<const float4 *>(cs + 36 + pair0);
    float c[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
    float s[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int k = 0; k < kPerLane / 2; k++) rope_rotate(r.v[2 * k], r.v[2 * k + 1], c[k], inverse ? -s[k] : s[k]);
}

// FP8 (per-64 ue8m0) of the no-rope lanes, bf16 rope lanes, written into one 584-byte entry.
// The whole warp takes part in the amax shuffle (rope lanes form their own unused group of four).
__device__ __forceinline__ void quant_insert_lane(const Row16 &r, int lane, const EntryLayout &cache, int64_t slot) {
    uint8_t *data = cache.data(slot);
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; i++) amax = fmaxf(amax, fabsf(r.v[i]));
    amax = group_max<4>(amax);
    if (lane < kRopeLane0) {
        float s = fp8_block_scale(amax);
        uint32_t w[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            w[i] = (uint32_t) fp8_encode(r.v[4 * i], s) | ((uint32_t) fp8_encode(r.v[4 * i + 1], s) << 8)
                 | ((uint32_t) fp8_encode(r.v[4 * i + 2], s) << 16) | ((uint32_t) fp8_encode(r.v[4 * i + 3], s) << 24);
        }
        // 8-byte stores: entries are only 8-byte aligned when packed at 584 bytes
        reinterpret_cast<uint2 *>(data + lane * kPerLane)[0] = make_uint2(w[0], w[1]);
        reinterpret_cast<uint2 *>(data + lane * kPerLane)[1] = make_uint2(w[2], w[3]);
        if ((lane & 3) == 0) cache.scales(slot)[lane >> 2] = e8m0_byte(s);
        if (lane == 0) cache.scales(slot)[kNope / 64] = 0;  // pad byte
    } else {
        store_row16_8(reinterpret_cast<uint16_t *>(data + kNope + (lane - kRopeLane0) * kPerLane * 2), r);
    }
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32, STRATA_F3_MIN_BLOCKS)
f3_fused_kernel(uint16_t *__restrict__ q, const uint16_t *__restrict__ kv,
                const int64_t *__restrict__ slots, const float *__restrict__ cos_sin, EntryLayout cache,
                int num_tokens, int num_heads, float eps) {
    strata_grid_begin();
    int lane = threadIdx.x & 31;
    int64_t total = (int64_t) num_tokens * (num_heads + 1);
    int64_t first = ((int64_t) blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5)) * STRATA_ROWS_PER_WARP;
    // all of this warp's rows (head slots) are loaded before any is processed
    Row16 rows[STRATA_ROWS_PER_WARP];
#pragma unroll
    for (int i = 0; i < STRATA_ROWS_PER_WARP; i++) {
        int64_t w = first + i;
        if (w >= total) break;
        int t = (int) (w / (num_heads + 1));
        int h = (int) (w % (num_heads + 1));
        rows[i] = load_row16(h < num_heads ? q + ((int64_t) t * num_heads + h) * kHead + lane * kPerLane
                                           : kv + (int64_t) t * kHead + lane * kPerLane);
    }
#pragma unroll
    for (int i = 0; i < STRATA_ROWS_PER_WARP; i++) {
        int64_t w = first + i;
        if (w >= total) return;
        int t = (int) (w / (num_heads + 1));
        int h = (int) (w % (num_heads + 1));
        const float *cs = cos_sin + (int64_t) t * 64;
        Row16 &r = rows[i];
        if (h < num_heads) {
            head_norm_bf16(r, eps);
            if (lane >= kRopeLane0) rope_lane(r, lane, cs, false);
            store_row16(q + ((int64_t) t * num_heads + h) * kHead + lane * kPerLane, r);
        } else {
            int64_t slot = slots[t];
            if (slot < 0) continue;  // padded token
            if (lane >= kRopeLane0) rope_lane(r, lane, cs, false);
            quant_insert_lane(r, lane, cache, slot);
        }
    }
}

// ---- unfused baseline: the same math, one kernel per step, intermediates through device memory ----

__global__ void q_norm_kernel(uint16_t *q, int rows, float eps) {
    strata_grid_begin();
    int lane = threadIdx.x & 31;
    int64_t row = (int64_t) blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (row >= rows) return;
    uint16_t *p = q + row * kHead + lane * kPerLane;
    Row16 r = load_row16(p);
    head_norm_bf16(r, eps);
    store_row16(p, r);
}

// RoPE on the rope part of rows of 512 (one thread per pair); heads_per_token maps a row to its token.
__global__ void rope_rows_kernel(uint16_t *x, int rows, int heads_per_token, const float *cos_sin, int inverse) {
    strata_grid_begin();
    int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (int64_t) rows * 32) return;
    int64_t row = i / 32;
    int pair = (int) (i % 32);
    uint16_t *p = x + row * kHead + kNope + 2 * pair;
    float re = bf16_bits_to_float(p[0]), im = bf16_bits_to_float(p[1]);
    float c, s;
    rope_cs(cos_sin + (row / heads_per_token) * 64, pair, c, s);
    rope_rotate(re, im, c, inverse ? -s : s);
    p[0] = float_to_bf16_bits(re);
    p[1] = float_to_bf16_bits(im);
}

// Per-64 FP8 of the 448 no-rope channels into a dense [T, 448] + [T, 7] buffer (one warp per 64-block... per row).
__global__ void kv_quant_kernel(const uint16_t *kv, uint8_t *fp8, uint8_t *scales, int rows) {
    strata_grid_begin();
    int lane = threadIdx.x & 31;
    int64_t row = (int64_t) blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
    if (row >= rows) return;
    Row16 r = load_row16(kv + row * kHead + lane * kPerLane);
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; i++) amax = fmaxf(amax, fabsf(r.v[i]));
    amax = group_max<4>(amax);
    if (lane >= kRopeLane0) return;
    float s = fp8_block_scale(amax);
#pragma unroll
    for (int i = 0; i < kPerLane; i++) fp8[row * kNope + lane * kPerLane + i] = fp8_encode(r.v[i], s);
    if ((lane & 3) == 0) scales[row * 8 + (lane >> 2)] = e8m0_byte(s);
}

// Copies the quantised parts and the bf16 rope part into the paged cache (one thread per entry byte group).
__global__ void kv_insert_kernel(const uint16_t *kv, const uint8_t *fp8, const uint8_t *scales, const int64_t *slots,
                                 EntryLayout cache, int rows) {
    strata_grid_begin();
    int row = blockIdx.x;
    if (row >= rows) return;
    int64_t slot = slots[row];
    if (slot < 0) return;
    uint8_t *data = cache.data(slot);
    for (int i = threadIdx.x; i < kNope; i += blockDim.x) data[i] = fp8[(int64_t) row * kNope + i];
    const uint8_t *rope = reinterpret_cast<const uint8_t *>(kv + (int64_t) row * kHead + kNope);
    for (int i = threadIdx.x; i < 128; i += blockDim.x) data[kNope + i] = rope[i];
    if (threadIdx.x < 7) cache.scales(slot)[threadIdx.x] = scales[row * 8 + threadIdx.x];
    if (threadIdx.x == 7) cache.scales(slot)[7] = 0;
}

}  // namespace

extern "C" {

int64_t strata_f3_workspace_bytes(int num_tokens) {
    return (int64_t) num_tokens * (kNope + 8) + 256;
}

int strata_f3_qnorm_rope_kv_insert(int64_t q, int64_t kv, int64_t slot_mapping, int64_t rope_cos_sin,
                                   int64_t cache_pool, int64_t page_bytes, int entries_per_page, int data_stride,
                                   int scale_base, int scale_stride, int num_tokens, int num_heads, float eps,
                                   int fused, int64_t workspace, int64_t stream) {
    if (num_tokens <= 0) return 0;
    EntryLayout cache{(uint8_t *) cache_pool, page_bytes, entries_per_page, data_stride, scale_base, scale_stride};
    cudaStream_t st = (cudaStream_t) stream;
    uint16_t *qp = (uint16_t *) q;
    const uint16_t *kvp = (const uint16_t *) kv;
    const int64_t *slots = (const int64_t *) slot_mapping;
    const float *cs = (const float *) rope_cos_sin;
    if (fused) {
        int64_t warps = ((int64_t) num_tokens * (num_heads + 1) + STRATA_ROWS_PER_WARP - 1) / STRATA_ROWS_PER_WARP;
        int blocks = (int) ((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
        strata_launch(f3_fused_kernel, blocks, kWarpsPerBlock * 32, 0, st, qp, kvp, slots, cs, cache, num_tokens,
            num_heads, eps);
        STRATA_LAUNCH_CHECK();
        return 0;
    }
    // unfused: q norm, q rope, kv rope (in place: this baseline overwrites kv's rope channels), kv quant, insert
    uint16_t *kv_copy = (uint16_t *) kv;
    uint8_t *fp8 = (uint8_t *) workspace;
    uint8_t *scales = fp8 + (int64_t) num_tokens * kNope;
    int qrows = num_tokens * num_heads;
    strata_launch(q_norm_kernel, (qrows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, st, qp,
        qrows, eps);
    STRATA_LAUNCH_CHECK();
    strata_launch(rope_rows_kernel, (int) (((int64_t) qrows * 32 + 255) / 256), 256, 0, st, qp, qrows, num_heads, cs,
        0);
    STRATA_LAUNCH_CHECK();
    strata_launch(rope_rows_kernel, (num_tokens * 32 + 255) / 256, 256, 0, st, kv_copy, num_tokens, 1, cs, 0);
    STRATA_LAUNCH_CHECK();
    strata_launch(kv_quant_kernel, (num_tokens + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, st,
        kv_copy, fp8, scales, num_tokens);
    STRATA_LAUNCH_CHECK();
    strata_launch(kv_insert_kernel, num_tokens, 128, 0, st, kv_copy, fp8, scales, slots, cache, num_tokens);
    STRATA_LAUNCH_CHECK();
    return 0;
}

// Shared with F2's unfused path.
int strata_rope_rows(int64_t x, int rows, int heads_per_token, int64_t rope_cos_sin, int inverse, int64_t stream) {
    if (rows <= 0) return 0;
    strata_launch(rope_rows_kernel, (int) (((int64_t) rows * 32 + 255) / 256), 256, 0, (cudaStream_t) stream,
        (uint16_t *) x, rows, heads_per_token, (const float *) rope_cos_sin, inverse);
    STRATA_LAUNCH_CHECK();
    return 0;
}

}  // extern "C"
