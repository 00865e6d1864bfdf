// F1: compressor (gated softmax pooling over state + new tokens) + RMSNorm + RoPE + quantisation +
// paged insert, and the compressor-state update, in one launch.
//
// One CTA per token of the step. Every token whose position is still inside the window after this
// step (position > last position of its sequence - coff*ratio) saves (kv, score + ape[pos % ratio]) into
// its state page. A token at the end of a block ((pos+1) % ratio == 0, out_slot >= 0) also emits entry
// pos / ratio: its candidates come from the step's own kv/score rows when they belong to this step, and
// from the state pages otherwise, so a whole prefill chunk needs no per-token state copy and no second
// launch (a state page is never both written and read in one launch: written positions are >= the
// step's first position, read ones are below it).
//
// Main cache (head 512): FP8 of the 448 no-rope channels (per-64 ue8m0), bf16 rope channels, 584 bytes.
// Indexer (head 128): Walsh-Hadamard * 128^-0.5 (bf16), FP4 e2m1 with per-32 ue8m0 scales, 68 bytes.
#include <cuda_runtime.h>
#include "numerics.cuh"
#include "strata_cuda.h"

using namespace strata;

namespace {

struct F1Args {
    const float *kv;
    const float *score;
    int64_t row_stride;
    const float *ape;
    const float *norm_weight;
    const float *cos_sin;  // [num_tokens, 64]: angles of the entry's position (pos - ratio + 1)
    const int *positions;
    const int *token_seq;
    const int *seq_first_token;
    const int *seq_first_pos;
    const int *seq_num_tokens;
    const int *state_table;
    int state_table_stride;
    uint8_t *state_pool;
    int64_t state_page_bytes;
    int state_positions_per_page;
    int state_span_positions;
    int state_pages_per_span;
    const int64_t *out_slot;
    EntryLayout cache;
    int num_tokens;
    float eps;
};

template <int HD, int R>
struct Geometry {
    static constexpr int kCoff = R == 4 ? 2 : 1;
    static constexpr int kWidth = kCoff * HD;              // state / input row width (floats)
    static constexpr int kCandidates = kCoff * R;          // tokens pooled into one entry
    static constexpr int kLanes = HD / 4;                  // threads per channel group (4 channels each)
    static constexpr int kStateEntryBytes = 2 * kWidth * 4;
};

// KvLayout's window paging: spans of state_span_positions cut into pages of state_positions_per_page;
// the physical page of a position, -1 where the cache manager mapped none
__device__ __forceinline__ int state_page(const F1Args &a, int seq, int pos) {
    int in_span = pos % a.state_span_positions;
    int vpage = (pos / a.state_span_positions) * a.state_pages_per_span + in_span / a.state_positions_per_page;
    return window_table_page(a.state_table, a.state_table_stride, seq, vpage);
}

template <int HD, int R>
__device__ __forceinline__ float *state_entry(const F1Args &a, int seq, int pos) {
    int in_span = pos % a.state_span_positions;
    return reinterpret_cast<float *>(a.state_pool + (int64_t) state_page(a, seq, pos) * a.state_page_bytes
                                     + (int64_t) (in_span % a.state_positions_per_page) * Geometry<HD, R>::kStateEntryBytes);
}

// The positions whose state is written: what the next step will still read (KvLayout's
// WindowRule(stride = ratio, blocks = coff)), and, where the cache manager mapped a page for it, the
// window just before each 256-position block boundary, which prefix caching keeps so that a later request
// can resume at that boundary (the CPU backend writes the same positions).
template <int HD, int R>
__device__ __forceinline__ bool keeps_state(const F1Args &a, int seq, int pos) {
    constexpr int kBoundaryWindow = (Geometry<HD, R>::kCoff - 1) * R;
    int computed = a.seq_first_pos[seq] + a.seq_num_tokens[seq];
    int start = R * (computed / R - (Geometry<HD, R>::kCoff - 1));
    if (pos >= start) return true;
    if (kBoundaryWindow == 0 || pos % 256 < 256 - kBoundaryWindow) return false;
    return state_page(a, seq, pos) >= 0;
}

// Step 1: save (kv, score + ape) of this token into its state page, if the window still needs it.
template <int HD, int R>
__device__ __forceinline__ void save_state(const F1Args &a, int t, int tid, int nthreads) {
    using G = Geometry<HD, R>;
    int seq = a.token_seq[t];
    int pos = a.positions[t];
    // a row whose state page is unmapped keeps nothing: the padding rows of a captured decode graph
    if (!keeps_state<HD, R>(a, seq, pos) || state_page(a, seq, pos) < 0) return;
    float *st = state_entry<HD, R>(a, seq, pos);
    const float4 *kv = reinterpret_cast<const float4 *>(a.kv + (int64_t) t * a.row_stride);
    const float4 *sc = reinterpret_cast<const float4 *>(a.score + (int64_t) t * a.row_stride);
    const float4 *ape = reinterpret_cast<const float4 *>(a.ape + (int64_t) (pos % R) * G::kWidth);
    float4 *skv = reinterpret_cast<float4 *>(st);
    float4 *ssc = reinterpret_cast<float4 *>(st + G::kWidth);
    for (int i = tid; i < G::kWidth / 4; i += nthreads) {
        skv[i] = kv[i];
        float4 s = sc[i], p = ape[i];
        ssc[i] = make_float4(__fadd_rn(s.x, p.x), __fadd_rn(s.y, p.y), __fadd_rn(s.z, p.z), __fadd_rn(s.w, p.w));
    }
}

struct Pool4 {
    float m[4], l[4], acc[4];
};

// Where each candidate's values live (this step's rows or a state page), resolved once per CTA so the
// pooling loop's loads are all independent: the table lookups are not on every load's critical path.
template <int HD, int R>
struct Candidates {
    const float *kv[Geometry<HD, R>::kCandidates];
    const float *score[Geometry<HD, R>::kCandidates];
    const float *ape[Geometry<HD, R>::kCandidates];  // non-null for rows of this step (score + ape on the fly)
};

// Every thread of the CTA must call it (it synchronises).
template <int HD, int R>
__device__ __forceinline__ void resolve_candidates(const F1Args &a, int t, Candidates<HD, R> &cand) {
    using G = Geometry<HD, R>;
    for (int j = threadIdx.x; j < G::kCandidates; j += blockDim.x) {
        int seq = a.token_seq[t];
        int pos = a.positions[t];
        int fpos = a.seq_first_pos[seq];
        int q = pos - G::kCandidates + 1 + j;
        int off = (G::kCoff == 2 && j >= R) ? HD : 0;
        if (q < 0) {  // block 0 of an overlapping compressor has no previous block
            cand.kv[j] = nullptr;
        } else if (q >= fpos) {
            int64_t row = (int64_t) (a.seq_first_token[seq] + (q - fpos)) * a.row_stride + off;
            cand.kv[j] = a.kv + row;
            cand.score[j] = a.score + row;
            cand.ape[j] = a.ape + (int64_t) (q % R) * G::kWidth + off;
        } else {
            const float *st = state_entry<HD, R>(a, seq, q);
            cand.kv[j] = st + off;
            cand.score[j] = st + G::kWidth + off;
            cand.ape[j] = nullptr;
        }
    }
    __syncthreads();
}

// Online softmax over this thread's share of the candidates (candidate j = first + k*step), 4 channels.
template <int HD, int R>
__device__ __forceinline__ Pool4 pool_candidates(const Candidates<HD, R> &cand, int c, int first, int step) {
    using G = Geometry<HD, R>;
    Pool4 p;
#pragma unroll
    for (int i = 0; i < 4; i++) { p.m[i] = -INFINITY; p.l[i] = 0.f; p.acc[i] = 0.f; }
#pragma unroll 8
    for (int j = first; j < G::kCandidates; j += step) {
        const float *kvp = cand.kv[j];
        if (kvp == nullptr) continue;
        float4 kv = *reinterpret_cast<const float4 *>(kvp + c);
        float4 sc = *reinterpret_cast<const float4 *>(cand.score[j] + c);
        const float *ap = cand.ape[j];
        if (ap != nullptr) {
            float4 e = *reinterpret_cast<const float4 *>(ap + c);
            sc = make_float4(__fadd_rn(sc.x, e.x), __fadd_rn(sc.y, e.y), __fadd_rn(sc.z, e.z), __fadd_rn(sc.w, e.w));
        }
        float kvs[4] = {kv.x, kv.y, kv.z, kv.w};
        float scs[4] = {sc.x, sc.y, sc.z, sc.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float m = fmaxf(p.m[i], scs[i]);
            float r = expf(p.m[i] - m);      // 0 on the first candidate (m was -inf)
            float e = expf(scs[i] - m);
            p.l[i] = p.l[i] * r + e;
            p.acc[i] = p.acc[i] * r + e * kvs[i];
            p.m[i] = m;
        }
    }
    return p;
}

__device__ __forceinline__ void merge(Pool4 &a, const Pool4 &b) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float m = fmaxf(a.m[i], b.m[i]);
        if (m == -INFINITY) continue;
        float ra = expf(a.m[i] - m), rb = expf(b.m[i] - m);
        a.l[i] = a.l[i] * ra + b.l[i] * rb;
        a.acc[i] = a.acc[i] * ra + b.acc[i] * rb;
        a.m[i] = m;
    }
}

// Sum over the first `lanes` threads (a multiple of 32); every thread of the CTA must call it.
template <int kThreads>
__device__ __forceinline__ float cta_sum(float v, float *scratch) {
    v = group_sum<32>(v);
    int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) scratch[warp] = v;
    __syncthreads();
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; w++) s += scratch[w];
    __syncthreads();
    return s;
}

// RMSNorm (fp32 statistics of the bf16-rounded pooled values, fp32 weight, bf16 out) on 4 channels.
template <int HD, int kLanesUsed>
__device__ __forceinline__ void rms_norm4(float *x, const float *w, int c, float eps, float *scratch, bool active) {
    float ss = 0.f;
    if (active) {
#pragma unroll
        for (int i = 0; i < 4; i++) { x[i] = bf16_round(x[i]); ss += __fmul_rn(x[i], x[i]); }
    }
    ss = cta_sum<kLanesUsed>(ss, scratch);
    float inv = (float) (1.0 / sqrt((double) __fadd_rn(__fdiv_rn(ss, (float) HD), eps)));
    if (active) {
#pragma unroll
        for (int i = 0; i < 4; i++) x[i] = bf16_round(__fmul_rn(w[c + i], __fmul_rn(x[i], inv)));
    }
}

// Main entry: FP8 of channels [0,448) with per-64 scales (16 threads per block), bf16 rope channels.
__device__ __forceinline__ void write_main_entry(const float *x, int c, const EntryLayout &cache, int64_t slot) {
    float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
    amax = group_max<16>(amax);
    uint8_t *data = cache.data(slot);
    if (c < 448) {
        float s = fp8_block_scale(amax);
        uint32_t w = (uint32_t) fp8_encode(x[0], s) | ((uint32_t) fp8_encode(x[1], s) << 8)
                   | ((uint32_t) fp8_encode(x[2], s) << 16) | ((uint32_t) fp8_encode(x[3], s) << 24);
        *reinterpret_cast<uint32_t *>(data + c) = w;
        if ((c & 63) == 0) cache.scales(slot)[c >> 6] = e8m0_byte(s);
        if (c == 0) cache.scales(slot)[7] = 0;
    } else {
        uint2 v = make_uint2((uint32_t) float_to_bf16_bits(x[0]) | ((uint32_t) float_to_bf16_bits(x[1]) << 16),
                             (uint32_t) float_to_bf16_bits(x[2]) | ((uint32_t) float_to_bf16_bits(x[3]) << 16));
        *reinterpret_cast<uint2 *>(data + 448 + (c - 448) * 2) = v;
    }
}

// Indexer entry: FP4 e2m1 with one ue8m0 per 32 channels (8 lanes), low nibble = even channel.
__device__ __forceinline__ void write_indexer_entry(const float *x, int lane, const EntryLayout &cache, int64_t slot) {
    float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
    amax = group_max<8>(amax);
    float s = fp4_block_scale(amax);
    uint8_t b0 = fp4_encode(x[0], s) | (fp4_encode(x[1], s) << 4);
    uint8_t b1 = fp4_encode(x[2], s) | (fp4_encode(x[3], s) << 4);
    uint8_t *data = cache.data(slot);
    data[2 * lane] = b0;
    data[2 * lane + 1] = b1;
    if ((lane & 7) == 0) cache.scales(slot)[lane >> 3] = e8m0_byte(s);
}

template <int HD, int R, int SPLIT>
__global__ void __launch_bounds__(Geometry<HD, R>::kLanes * SPLIT)
f1_fused_kernel(F1Args a) {
    strata_grid_begin();
    using G = Geometry<HD, R>;
    constexpr int kThreads = G::kLanes * SPLIT;
    __shared__ float scratch[32];
    __shared__ Pool4 partial[SPLIT > 1 ? kThreads : 1];
    __shared__ Candidates<HD, R> cand;
    int t = blockIdx.x;
    int tid = threadIdx.x;
    save_state<HD, R>(a, t, tid, kThreads);
    int pos = a.positions[t];
    int64_t slot = a.out_slot[t];
    if (slot < 0 || (pos + 1) % R != 0) return;  // CTA-uniform

    int group = tid / G::kLanes;
    int c = (tid % G::kLanes) * 4;
    resolve_candidates<HD, R>(a, t, cand);
    Pool4 p = pool_candidates<HD, R>(cand, c, group, SPLIT);
    if constexpr (SPLIT > 1) {
        partial[tid] = p;
        __syncthreads();
        if (group == 0) {
            for (int g = 1; g < SPLIT; g++) merge(p, partial[g * G::kLanes + tid]);
        }
    }
    bool active = group == 0;
    float x[4];
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = active && p.l[i] > 0.f ? p.acc[i] / p.l[i] : 0.f;
    rms_norm4<HD, kThreads>(x, a.norm_weight, c, a.eps, scratch, active);
    if (!active) return;
    rope4<HD>(x, c, a.cos_sin + (int64_t) t * 64);
    if constexpr (HD == 512) {
        write_main_entry(x, c, a.cache, slot);
    } else {
        hadamard128(x, tid);
        write_indexer_entry(x, tid, a.cache, slot);
    }
}

// ---- unfused baseline: state save, pooling, norm, rope, (Hadamard,) quantise, insert as separate kernels ----

template <int HD, int R>
__global__ void k_save_state(F1Args a) {
    strata_grid_begin();
    save_state<HD, R>(a, blockIdx.x, threadIdx.x, blockDim.x);
}

template <int HD, int R>
__global__ void k_pool(F1Args a, float *pooled) {
    strata_grid_begin();
    __shared__ Candidates<HD, R> cand;
    int t = blockIdx.x;
    int pos = a.positions[t];
    if (a.out_slot[t] < 0 || (pos + 1) % R != 0) return;
    int c = threadIdx.x * 4;
    resolve_candidates<HD, R>(a, t, cand);
    Pool4 p = pool_candidates<HD, R>(cand, c, 0, 1);
#pragma unroll
    for (int i = 0; i < 4; i++) pooled[(int64_t) t * HD + c + i] = p.l[i] > 0.f ? p.acc[i] / p.l[i] : 0.f;
}

template <int HD, int R>
__global__ void k_norm(F1Args a, const float *pooled, uint16_t *normed) {
    strata_grid_begin();
    __shared__ float scratch[32];
    int t = blockIdx.x;
    int pos = a.positions[t];
    if (a.out_slot[t] < 0 || (pos + 1) % R != 0) return;
    int c = threadIdx.x * 4;
    float x[4];
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = pooled[(int64_t) t * HD + c + i];
    rms_norm4<HD, HD / 4>(x, a.norm_weight, c, a.eps, scratch, true);
#pragma unroll
    for (int i = 0; i < 4; i++) normed[(int64_t) t * HD + c + i] = float_to_bf16_bits(x[i]);
}

template <int HD, int R>
__global__ void k_rope(F1Args a, uint16_t *normed) {
    strata_grid_begin();
    int t = blockIdx.x;
    int pos = a.positions[t];
    if (a.out_slot[t] < 0 || (pos + 1) % R != 0) return;
    int pair = threadIdx.x;  // 32 pairs
    uint16_t *p = normed + (int64_t) t * HD + HD - 64 + 2 * pair;
    float re = bf16_bits_to_float(p[0]), im = bf16_bits_to_float(p[1]);
    float cs, sn;
    rope_cs(a.cos_sin + (int64_t) t * 64, pair, cs, sn);
    rope_rotate(re, im, cs, sn);
    p[0] = float_to_bf16_bits(re);
    p[1] = float_to_bf16_bits(im);
}

template <int R>
__global__ void k_hadamard(F1Args a, uint16_t *normed) {
    strata_grid_begin();
    int t = blockIdx.x;
    int pos = a.positions[t];
    if (a.out_slot[t] < 0 || (pos + 1) % R != 0) return;
    int lane = threadIdx.x;
    float x[4];
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = bf16_bits_to_float(normed[(int64_t) t * 128 + lane * 4 + i]);
    hadamard128(x, lane);
#pragma unroll
    for (int i = 0; i < 4; i++) normed[(int64_t) t * 128 + lane * 4 + i] = float_to_bf16_bits(x[i]);
}

// Quantise into a dense staging row (entry-shaped: values then scales), then insert copies it.
template <int HD, int R>
__global__ void k_quant(F1Args a, const uint16_t *normed, uint8_t *staged) {
    strata_grid_begin();
    int t = blockIdx.x;
    int pos = a.positions[t];
    if (a.out_slot[t] < 0 || (pos + 1) % R != 0) return;
    int c = threadIdx.x * 4;
    float x[4];
#pragma unroll
    for (int i = 0; i < 4; i++) x[i] = bf16_bits_to_float(normed[(int64_t) t * HD + c + i]);
    constexpr int kEntry = HD == 512 ? 584 : 68;
    constexpr int kData = HD == 512 ? 576 : 64;
    EntryLayout dense{staged, kEntry, 1, kData, kData, 0};
    if constexpr (HD == 512) write_main_entry(x, c, dense, t); else write_indexer_entry(x, threadIdx.x, dense, t);
}

template <int HD, int R>
__global__ void k_insert(F1Args a, const uint8_t *staged) {
    strata_grid_begin();
    int t = blockIdx.x;
    int pos = a.positions[t];
    int64_t slot = a.out_slot[t];
    if (slot < 0 || (pos + 1) % R != 0) return;
    constexpr int kEntry = HD == 512 ? 584 : 68;
    constexpr int kData = HD == 512 ? 576 : 64;
    const uint8_t *src = staged + (int64_t) t * kEntry;
    uint8_t *data = a.cache.data(slot);
    uint8_t *scales = a.cache.scales(slot);
    for (int i = threadIdx.x; i < kData; i += blockDim.x) data[i] = src[i];
    for (int i = threadIdx.x; i < kEntry - kData; i += blockDim.x) scales[i] = src[kData + i];
}

template <int HD, int R, int SPLIT>
int launch(const F1Args &a, int fused, int64_t workspace, cudaStream_t st) {
    using G = Geometry<HD, R>;
    int T = a.num_tokens;
    if (fused) {
        strata_launch(f1_fused_kernel<HD, R, SPLIT>, T, G::kLanes * SPLIT, 0, st, a);
        STRATA_LAUNCH_CHECK();
        return 0;
    }
    float *pooled = (float *) workspace;
    uint16_t *normed = (uint16_t *) (pooled + (int64_t) T * HD);
    uint8_t *staged = (uint8_t *) (normed + (int64_t) T * HD);
    strata_launch(k_save_state<HD, R>, T, 128, 0, st, a);
    STRATA_LAUNCH_CHECK();
    strata_launch(k_pool<HD, R>, T, G::kLanes, 0, st, a, pooled);
    STRATA_LAUNCH_CHECK();
    strata_launch(k_norm<HD, R>, T, G::kLanes, 0, st, a, pooled, normed);
    STRATA_LAUNCH_CHECK();
    strata_launch(k_rope<HD, R>, T, 32, 0, st, a, normed);
    STRATA_LAUNCH_CHECK();
    if constexpr (HD == 128) {
        strata_launch(k_hadamard<R>, T, 32, 0, st, a, normed);
        STRATA_LAUNCH_CHECK();
    }
    strata_launch(k_quant<HD, R>, T, G::kLanes, 0, st, a, normed, staged);
    STRATA_LAUNCH_CHECK();
    strata_launch(k_insert<HD, R>, T, 128, 0, st, a, staged);
    STRATA_LAUNCH_CHECK();
    return 0;
}

}  // namespace

extern "C" {

int64_t strata_f1_workspace_bytes(int num_tokens, int head_dim) {
    return (int64_t) num_tokens * head_dim * (4 + 2) + (int64_t) num_tokens * 584 + 256;
}

int strata_f1_compress_insert(int64_t kv, int64_t score, int64_t row_stride, int64_t ape, int64_t norm_weight,
                              int64_t rope_cos_sin, int64_t positions, int64_t token_seq, int64_t seq_first_token,
                              int64_t seq_first_pos, int64_t seq_num_tokens, int64_t state_block_table,
                              int state_table_stride, int64_t state_pool, int64_t state_page_bytes,
                              int state_positions_per_page, int state_span_positions, int state_pages_per_span,
                              int64_t out_slot, int64_t cache_pool, int64_t cache_page_bytes,
                              int entries_per_page, int data_stride, int scale_base, int scale_stride,
                              int num_tokens, int ratio, int head_dim, float eps, int fused, int64_t workspace,
                              int64_t stream) {
    if (num_tokens <= 0) return 0;
    F1Args a{(const float *) kv, (const float *) score, row_stride, (const float *) ape, (const float *) norm_weight,
             (const float *) rope_cos_sin, (const int *) positions, (const int *) token_seq,
             (const int *) seq_first_token, (const int *) seq_first_pos, (const int *) seq_num_tokens,
             (const int *) state_block_table, state_table_stride, (uint8_t *) state_pool, state_page_bytes,
             state_positions_per_page, state_span_positions, state_pages_per_span, (const int64_t *) out_slot,
             EntryLayout{(uint8_t *) cache_pool, cache_page_bytes, entries_per_page, data_stride, scale_base,
                         scale_stride},
             num_tokens, eps};
    cudaStream_t st = (cudaStream_t) stream;
    if (head_dim == 512 && ratio == 4) return launch<512, 4, 1>(a, fused, workspace, st);
    if (head_dim == 512 && ratio == 128) return launch<512, 128, 4>(a, fused, workspace, st);
    if (head_dim == 128 && ratio == 4) return launch<128, 4, 1>(a, fused, workspace, st);
    return (int) cudaErrorInvalidValue;
}

}  // extern "C"
