// The MoE sub-layer's device steps, matching io.strata.backend.cpu.model.MoeLayer and ops.Moe:
//   route    sqrt(softplus(gate logits)); top-k of score + bias (or the tid2eid row); weights = chosen
//            unbiased scores / their sum * routed_scaling_factor
//   plan     per-expert slot lists (counting sort on the device: nothing goes back to the host)
//   experts  grouped GEMMs (gemm.cuh, experts mode) over the slot lists
//   swiglu   bf16(w * silu(min(g, limit)) * clamp(u, +-limit)), then the FP8 round trip w2's input gets
//   combine  per token, sum of its experts' bf16 outputs in expert index order in fp32 from 0, plus the
//            shared expert's bf16 output, rounded to bf16
// Every launch shape depends only on (m, k, experts, sizes), so a forward pass can be captured in a graph.
#include "gemm.cuh"
#include "strata_cuda.h"

namespace strata {
namespace {

constexpr int kMaxExperts = 1024;  // the plan kernel is one CTA of 1024 threads, one expert per thread
constexpr int kMaxTopK = 16;

// torch's softplus (threshold 20) then sqrt, as Moe.sqrtSoftplus: log1p(exp(x)) in double, rounded to
// float, then a correctly rounded float sqrt.
__device__ __forceinline__ float sqrt_softplus(float x) {
    float sp = x > 20.f ? x : (float) log1p(exp((double) x));
    return __fsqrt_rn(sp);
}

// Whether candidate (v, i) beats (bv, bi): higher value, lower index on exact ties; i < 0 means none.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
    if (i < 0) return false;
    if (bi < 0) return true;
    return v > bv || (v == bv && i < bi);
}

constexpr int kRouteThreads = 256;
constexpr int kRouteMaxPerLane = kMaxExperts / 32;

// One CTA per token: every thread scores experts (the double-precision softplus is the costly part, so it is
// spread over the CTA rather than over one warp's lanes), then the first warp picks the top k from registers:
// lane l holds experts l, l + 32, ... and a bit per expert already picked. Each pick is the warp's best by
// `better` over the lanes' bests, every lane scanning its experts in ascending order, as a scan of all experts
// in index order would find (the order is total, so the result does not depend on how the warp splits them).
template <int PER_LANE>
__global__ void __launch_bounds__(kRouteThreads)
k_moe_route(const float *scores, int experts, int k, const float *bias, const int *tid2eid, int vocab,
            const int *tokens, float route_scale, int *ids, float *weights) {
    strata_grid_begin();
    extern __shared__ float s_all[];  // [experts] sqrt-softplus scores, then [experts] biased scores
    float *s = s_all, *sb = s_all + experts;
    const int t = blockIdx.x, lane = threadIdx.x & 31;
    for (int e = threadIdx.x; e < experts; e += kRouteThreads) {
        const float v = sqrt_softplus(scores[(size_t) t * experts + e]);
        s[e] = v;
        sb[e] = bias ? __fadd_rn(v, bias[e]) : v;
    }
    __syncthreads();
    if (threadIdx.x >= 32) return;
    int pick[kMaxTopK];
    if (tid2eid != nullptr) {
        int tok = tokens[t];
        if (tok < 0 || tok >= vocab) tok = 0;  // memory safety only: the engine never passes such ids
#pragma unroll
        for (int j = 0; j < kMaxTopK; j++) pick[j] = j < k ? tid2eid[(size_t) tok * k + j] : 0;
    } else {
        float v[PER_LANE];
#pragma unroll
        for (int i = 0; i < PER_LANE; i++) v[i] = lane + 32 * i < experts ? sb[lane + 32 * i] : 0.f;
        uint32_t taken = 0;  // bit i: expert lane + 32 i was picked
#pragma unroll
        for (int j = 0; j < kMaxTopK; j++) {
            if (j >= k) break;
            float bv = 0.f;
            int bi = -1;
#pragma unroll
            for (int i = 0; i < PER_LANE; i++) {
                const int e = lane + 32 * i;
                if (e < experts && !((taken >> i) & 1u) && better(v[i], e, bv, bi)) { bv = v[i]; bi = e; }
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                float ov = __shfl_xor_sync(0xffffffffu, bv, o);
                int oi = __shfl_xor_sync(0xffffffffu, bi, o);
                if (better(ov, oi, bv, bi)) { bv = ov; bi = oi; }
            }
            pick[j] = bi;  // the same on every lane: the comparison is a total order
            if ((bi & 31) == lane) taken |= 1u << (bi >> 5);
        }
    }
    if (lane != 0) return;
    float w[kMaxTopK], sum = 0.f;
#pragma unroll
    for (int j = 0; j < kMaxTopK; j++) {
        if (j < k) {
            w[j] = s[pick[j]];
            sum = __fadd_rn(sum, w[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < kMaxTopK; j++) {
        if (j < k) {
            ids[(size_t) t * k + j] = pick[j];
            weights[(size_t) t * k + j] = __fmul_rn(__fdiv_rn(w[j], sum), route_scale);
        }
    }
}

// Exclusive prefix sum over the CTA (1024 threads, thread i holds v); returns the total through `total`.
__device__ int block_exclusive_scan(int v, int *warp_sums, int &total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int incl = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int n = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += n;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int ws = warp_sums[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            int n = __shfl_up_sync(0xffffffffu, ws, o);
            if (lane >= o) ws += n;
        }
        warp_sums[lane] = ws;  // inclusive over warps
    }
    __syncthreads();
    int before = (warp > 0 ? warp_sums[warp - 1] : 0) + incl - v;
    total = warp_sums[31];
    __syncthreads();  // warp_sums is reused by the next scan
    return before;
}

// One CTA of kMaxExperts threads: counts per expert, slot offsets, tile offsets, then every (token, j) pair
// gets a slot in its expert's range. The order of slots inside an expert is whatever the atomics give; no
// result depends on it (each GEMM row is computed alone, and combine reads slots by pair).
__global__ void __launch_bounds__(kMaxExperts)
k_moe_plan(const int *ids, const float *weights, int pairs, int k, int experts, int tile_rows, int *offsets,
           int *tile_offsets, int *sorted_rows, float *sorted_weights, int *slot_of_pair) {
    strata_grid_begin();
    __shared__ int count[kMaxExperts];
    __shared__ int cursor[kMaxExperts];
    __shared__ int warp_sums[32];
    const int tid = threadIdx.x;
    count[tid] = 0;
    __syncthreads();
    for (int p = tid; p < pairs; p += blockDim.x) atomicAdd(&count[ids[p]], 1);
    __syncthreads();
    int c = tid < experts ? count[tid] : 0;
    int total, tiles;
    int off = block_exclusive_scan(c, warp_sums, total);
    int toff = block_exclusive_scan((c + tile_rows - 1) / tile_rows, warp_sums, tiles);
    if (tid < experts) {
        offsets[tid] = off;
        tile_offsets[tid] = toff;
    }
    if (tid == 0) {
        offsets[experts] = total;
        tile_offsets[experts] = tiles;
    }
    cursor[tid] = off;
    __syncthreads();
    for (int p = tid; p < pairs; p += blockDim.x) {
        int slot = atomicAdd(&cursor[ids[p]], 1);
        sorted_rows[slot] = p / k;
        sorted_weights[slot] = weights[p];
        slot_of_pair[p] = slot;
    }
}

// One warp per 128 channels of one row: the clamped SwiGLU (Moe.swiglu) rounded to bf16, then, when w2 is
// FP8/FP4, its FP8 round trip per 128 (ActivationQuant.fp8RoundTrip). In place over `gate` is allowed.
__global__ void k_moe_swiglu(const __nv_bfloat16 *gate, const __nv_bfloat16 *up, const float *row_weights, int rows,
                             int inter, float limit, int quantize, __nv_bfloat16 *out) {
    strata_grid_begin();
    const int blocks = inter / 128;
    const int gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (gw >= rows * blocks) return;
    const int r = gw / blocks;
    const size_t base = (size_t) r * inter + (gw % blocks) * 128 + lane * 4;
    const float w = row_weights ? row_weights[r] : 1.f;
    const uint2 graw = *reinterpret_cast<const uint2 *>(gate + base);
    const uint2 uraw = *reinterpret_cast<const uint2 *>(up + base);
    const uint32_t gw2[2] = {graw.x, graw.y}, uw2[2] = {uraw.x, uraw.y};
    float h[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        uint32_t gb = gw2[i >> 1], ub = uw2[i >> 1];
        float g = __uint_as_float((i & 1) ? (gb & 0xffff0000u) : (gb << 16));
        float u = __uint_as_float((i & 1) ? (ub & 0xffff0000u) : (ub << 16));
        if (limit > 0.f) {
            u = fminf(fmaxf(u, -limit), limit);
            g = fminf(g, limit);
        }
        float silu = __fdiv_rn(g, __fadd_rn(1.f, (float) exp(-(double) g)));
        h[i] = bf16_round(__fmul_rn(w, __fmul_rn(silu, u)));
    }
    if (quantize) {
        float amax = fmaxf(fmaxf(fabsf(h[0]), fabsf(h[1])), fmaxf(fabsf(h[2]), fabsf(h[3])));
        const float s = fp8_block_scale(group_max<32>(amax));
#pragma unroll
        for (int i = 0; i < 4; i++) {
            __half_raw q = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t) fp8_encode(h[i], s), __NV_E4M3);
            h[i] = __half2float(__half(q)) * s;  // exact
        }
    }
    uint16_t b[4];
#pragma unroll
    for (int i = 0; i < 4; i++) b[i] = float_to_bf16_bits(h[i]);
    *reinterpret_cast<uint2 *>(out + base) = make_uint2(b[0] | ((uint32_t) b[1] << 16), b[2] | ((uint32_t) b[3] << 16));
}

// One CTA per token: its routed outputs summed in expert index order (stable in j for a repeated expert),
// in fp32 from 0, plus the shared expert's output, rounded to bf16 (MoeLayer.forward). The first k threads
// place the token's slots in that order (a pair's rank: the pairs of a lower expert, or of the same expert
// and a lower j, before it); then each thread issues the loads of its 8 channels from every slot at once and
// adds them in order, so a thread waits for memory once rather than once per expert.
constexpr int kCombineThreads = 512;

__global__ void __launch_bounds__(kCombineThreads)
k_moe_combine(const __nv_bfloat16 *routed, const __nv_bfloat16 *shared, const int *ids, const int *slot_of_pair,
              int k, int dim, __nv_bfloat16 *out) {
    strata_grid_begin();
    __shared__ int ordered[kMaxTopK];
    const int t = blockIdx.x;
    if (threadIdx.x < k) {
        const int j = threadIdx.x, id = ids[(size_t) t * k + j];
        int rank = 0;
        for (int i = 0; i < k; i++) {
            const int other = ids[(size_t) t * k + i];
            rank += other < id || (other == id && i < j);
        }
        ordered[rank] = slot_of_pair[(size_t) t * k + j];
    }
    __syncthreads();
    int slot[kMaxTopK];
#pragma unroll
    for (int j = 0; j < kMaxTopK; j++) slot[j] = j < k ? ordered[j] : 0;
    for (int c = threadIdx.x * 8; c < dim; c += blockDim.x * 8) {
        uint4 v[kMaxTopK];
#pragma unroll
        for (int j = 0; j < kMaxTopK; j++) {
            if (j < k) v[j] = *reinterpret_cast<const uint4 *>(routed + (size_t) slot[j] * dim + c);
        }
        const uint4 sv = *reinterpret_cast<const uint4 *>(shared + (size_t) t * dim + c);
        float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < kMaxTopK; j++) {
            if (j < k) {
                const uint32_t w[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    acc[2 * i] = __fadd_rn(acc[2 * i], __uint_as_float(w[i] << 16));
                    acc[2 * i + 1] = __fadd_rn(acc[2 * i + 1], __uint_as_float(w[i] & 0xffff0000u));
                }
            }
        }
        const uint32_t sw[4] = {sv.x, sv.y, sv.z, sv.w};
        uint32_t o[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint16_t lo = float_to_bf16_bits(__fadd_rn(acc[2 * i], __uint_as_float(sw[i] << 16)));
            uint16_t hi = float_to_bf16_bits(__fadd_rn(acc[2 * i + 1], __uint_as_float(sw[i] & 0xffff0000u)));
            o[i] = lo | ((uint32_t) hi << 16);
        }
        *reinterpret_cast<uint4 *>(out + (size_t) t * dim + c) = make_uint4(o[0], o[1], o[2], o[3]);
    }
}

}  // namespace
}  // namespace strata

using namespace strata;

int strata_moe_tile_rows(int m, int k, int experts) {
    const int64_t pairs = (int64_t) m * k;
    // Decode-sized batches: tiles of kGemvRows slots of one expert on the tensor-core decode kernel, which reads
    // each expert's weights once per 8 of its rows and decodes them once for all. One token too: each expert's
    // tile then holds one slot, and the kernel's FP4 decode into MMAs issues half the SIMT kernel's instructions
    // (the w1 + w3 pair 36-38 -> 27-28 us, the one-token step's device time 3% shorter; docs/benchmarks.md).
    const DecodeGemm mode = decode_gemm_mode();
    if (mode != DecodeGemm::kSimt && pairs <= (int64_t) 2 * kGemvRows * experts) return kGemvRows;
    if (pairs <= (int64_t) 2 * experts) return 1;
    if (pairs <= (int64_t) 8 * experts) return 4;
    return pairs <= (int64_t) 2 * kGemvRows * experts ? kGemvRows : kMmaRows;
}

int strata_moe_route(int64_t scores, int m, int experts, int k, int64_t bias, int64_t tid2eid, int vocab,
                     int64_t tokens, float route_scale, int64_t ids, int64_t weights, int64_t stream) {
    if (m <= 0) return 0;
    if (k < 1 || k > kMaxTopK || k > experts || experts > kMaxExperts) return (int) cudaErrorInvalidValue;
    const size_t smem = (size_t) 2 * experts * sizeof(float);
    auto *kernel = experts <= 256 ? k_moe_route<8> : k_moe_route<kRouteMaxPerLane>;
    strata_launch(kernel, m, kRouteThreads, smem, (cudaStream_t) stream, reinterpret_cast<const float *>(scores),
        experts, k, reinterpret_cast<const float *>(bias), reinterpret_cast<const int *>(tid2eid), vocab,
        reinterpret_cast<const int *>(tokens), route_scale, reinterpret_cast<int *>(ids),
        reinterpret_cast<float *>(weights));
    STRATA_LAUNCH_CHECK();
    return 0;
}

int strata_moe_plan(int64_t ids, int64_t weights, int m, int k, int experts, int tile_rows, int64_t offsets,
                    int64_t tile_offsets, int64_t sorted_rows, int64_t sorted_weights, int64_t slot_of_pair,
                    int64_t stream) {
    if (m <= 0) return 0;
    if (experts > kMaxExperts || tile_rows <= 0) return (int) cudaErrorInvalidValue;
    strata_launch(k_moe_plan, 1, kMaxExperts, 0, (cudaStream_t) stream, reinterpret_cast<const int *>(ids),
        reinterpret_cast<const float *>(weights), m * k, k, experts, tile_rows, reinterpret_cast<int *>(offsets),
        reinterpret_cast<int *>(tile_offsets), reinterpret_cast<int *>(sorted_rows),
        reinterpret_cast<float *>(sorted_weights), reinterpret_cast<int *>(slot_of_pair));
    STRATA_LAUNCH_CHECK();
    return 0;
}

namespace {

// One launch over the routed slots for one matrix, or two of the same shape and format (w_pair != 0).
int expert_linear(int fmt, int64_t w, int64_t scale, int64_t w_pair, int64_t scale_pair, int64_t w_stride,
                  int64_t s_stride, int rows, int cols, int experts, int pairs, int tile_rows, int64_t offsets,
                  int64_t tile_offsets, int64_t gather, int64_t x, int lda, int64_t y, int64_t y_pair, int ldy,
                  int64_t stream) {
    if (pairs <= 0) return 0;
    if (cols % 8 != 0 || lda % 8 != 0 || (x & 15) != 0 || (fmt & 0xff) == kF32
        || !(tile_rows == 1 || tile_rows == 2 || tile_rows == 4 || tile_rows == kGemvRows || tile_rows == kMmaRows)) {
        return (int) cudaErrorInvalidValue;
    }
    // the paired output lies a whole number of bf16 elements away
    if (w_pair != 0 && ((y_pair - y) % 2 != 0 || (scale == 0) != (scale_pair == 0))) return (int) cudaErrorInvalidValue;
    GemmArgs a{};
    if (!parse_fmt(fmt, a)) return (int) cudaErrorInvalidValue;
    a.w = reinterpret_cast<const uint8_t *>(w);
    a.scale = reinterpret_cast<const uint8_t *>(scale);
    a.w_stride = w_stride;
    a.s_stride = s_stride;
    a.rows = rows;
    a.cols = cols;
    a.groups = 1;
    a.x = reinterpret_cast<const __nv_bfloat16 *>(x);
    a.lda = lda;
    a.y = reinterpret_cast<void *>(y);
    a.ldy = ldy;
    a.bf16_out = 1;
    a.m = pairs;
    a.offsets = reinterpret_cast<const int *>(offsets);
    a.tile_offsets = reinterpret_cast<const int *>(tile_offsets);
    a.gather = reinterpret_cast<const int *>(gather);
    a.experts = experts;
    // sum over experts of ceil(count / tile) <= pairs / tile + (experts that have any slot); one-row tiles
    // are exactly the pairs
    a.max_tiles = tile_rows == 1 ? pairs : (pairs + tile_rows - 1) / tile_rows + (experts < pairs ? experts : pairs);
    a.tile_rows = tile_rows;
    if (w_pair != 0) {
        a.mats = 2;
        a.w_pair = reinterpret_cast<const uint8_t *>(w_pair);
        a.scale_pair = reinterpret_cast<const uint8_t *>(scale_pair);
        a.y_pair = (y_pair - y) / 2;
    }
    return (int) launch_gemm(a, (cudaStream_t) stream);
}

}  // namespace

int strata_moe_expert_linear(int fmt, int64_t w, int64_t scale, int64_t w_stride, int64_t s_stride, int rows,
                             int cols, int experts, int pairs, int tile_rows, int64_t offsets, int64_t tile_offsets,
                             int64_t gather, int64_t x, int lda, int64_t y, int ldy, int64_t stream) {
    return expert_linear(fmt, w, scale, 0, 0, w_stride, s_stride, rows, cols, experts, pairs, tile_rows, offsets,
                         tile_offsets, gather, x, lda, y, 0, ldy, stream);
}

int strata_moe_expert_linear_pair(int fmt, int64_t w, int64_t scale, int64_t w_pair, int64_t scale_pair,
                                  int64_t w_stride, int64_t s_stride, int rows, int cols, int experts, int pairs,
                                  int tile_rows, int64_t offsets, int64_t tile_offsets, int64_t gather, int64_t x,
                                  int lda, int64_t y, int64_t y_pair, int ldy, int64_t stream) {
    if (w_pair == 0) return (int) cudaErrorInvalidValue;
    return expert_linear(fmt, w, scale, w_pair, scale_pair, w_stride, s_stride, rows, cols, experts, pairs, tile_rows,
                         offsets, tile_offsets, gather, x, lda, y, y_pair, ldy, stream);
}

int strata_moe_swiglu(int64_t gate, int64_t up, int64_t row_weights, int rows, int inter, float limit, int quantize,
                      int64_t out, int64_t stream) {
    if (rows <= 0) return 0;
    if (inter % 128 != 0) return (int) cudaErrorInvalidValue;
    int64_t warps = (int64_t) rows * (inter / 128);
    strata_launch(k_moe_swiglu, (unsigned) ((warps + 7) / 8), 256, 0, (cudaStream_t) stream,
        reinterpret_cast<const __nv_bfloat16 *>(gate), reinterpret_cast<const __nv_bfloat16 *>(up),
        reinterpret_cast<const float *>(row_weights), rows, inter, limit, quantize,
        reinterpret_cast<__nv_bfloat16 *>(out));
    STRATA_LAUNCH_CHECK();
    return 0;
}

int strata_moe_combine(int64_t routed, int64_t shared, int64_t ids, int64_t slot_of_pair, int m, int k, int dim,
                       int64_t out, int64_t stream) {
    if (m <= 0) return 0;
    if (dim % 8 != 0 || k > kMaxTopK) return (int) cudaErrorInvalidValue;
    const int threads = dim / 8 < kCombineThreads ? (dim / 8 + 31) & ~31 : kCombineThreads;
    strata_launch(k_moe_combine, m, threads, 0, (cudaStream_t) stream, reinterpret_cast<const __nv_bfloat16 *>(routed),
        reinterpret_cast<const __nv_bfloat16 *>(shared), reinterpret_cast<const int *>(ids),
        reinterpret_cast<const int *>(slot_of_pair), k, dim, reinterpret_cast<__nv_bfloat16 *>(out));
    STRATA_LAUNCH_CHECK();
    return 0;
}
