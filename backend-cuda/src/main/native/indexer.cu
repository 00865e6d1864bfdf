// Lightning indexer on the GPU: query preparation, scores over the paged FP4 keys, exact top-k.
//
// Numerics follow the CPU backend's Indexer line by line, so scores are bit-identical and the
// selected sets are identical (ties included):
//   q_h  = fp4(hadamard(rope(q_h)) * 128^-0.5)             e2m1 codes with one ue8m0 per 32 channels
//   w_h  = bf16(w_h * weight_scale)
//   d    = bf16(q_h . k)                                   fp32 dot, exact: e2m1 x e2m1 products are
//                                                          small multiples of a power of two
//   s   += bf16(d * w_h)  for d > 0, heads in order 0..H-1 (fp32 sum)
//   score = bf16(s)
//   top-k: the k highest scores, the lower candidate index first among equal scores.
//
// e2m1 codes are carried as int8 values twice the e2m1 value ({0,1,2,3,4,6,8,12} with sign), so a
// 32-channel block's dot product is an exact int32 from __dp4a; the block's fp32 value is that integer
// times (scale_q * scale_k / 4), a power of two, which is exact.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "async_copy.cuh"
#include "numerics.cuh"
#include "strata_cuda.h"

using namespace strata;

namespace {

constexpr int kIdxDim = 128;                 // index_head_dim
constexpr int kScoreThreads = 256;           // one key per thread

// 2 x e2m1 as int8 for magnitudes 0..7 and for their negatives, as bytes for __byte_perm:
// 0,1,2,3 | 4,6,8,12 and 0,-1,-2,-3 | -4,-6,-8,-12
constexpr uint32_t kMagLo = 0x03020100u;
constexpr uint32_t kMagHi = 0x0C080604u;
constexpr uint32_t kNegLo = 0xFDFEFF00u;
constexpr uint32_t kNegHi = 0xF4F8FAFCu;

// Four e2m1 codes (the low 16 bits of mag: magnitudes, of sign: sign bits moved to bit 0 of each nibble) as
// four int8 (twice the value).
__device__ __forceinline__ uint32_t e2m1x4_lookup(uint32_t mag, uint32_t sign) {
    uint32_t pos = __byte_perm(kMagLo, kMagHi, mag);
    uint32_t neg = __byte_perm(kNegLo, kNegHi, mag);
    uint32_t m = __byte_perm(0x0000FF00u, 0u, sign);  // 0xff in the bytes of negative codes
    return (pos & ~m) | (neg & m);
}

// Eight e2m1 codes (one nibble each, low nibble first) -> two words of four int8 values (2x the value).
__device__ __forceinline__ void e2m1x8_to_int8(uint32_t w, uint32_t &lo, uint32_t &hi) {
    const uint32_t mag = w & 0x77777777u, sign = (w >> 3) & 0x11111111u;
    lo = e2m1x4_lookup(mag, sign);
    hi = e2m1x4_lookup(mag >> 16, sign >> 16);
}

// The accumulators of a warp's 64 heads x 16 keys (four m-tiles, two n-tiles of an m16n8 MMA), all set to v.
template <typename T>
__device__ __forceinline__ void fill_tiles(T (&x)[4][2][4], T v) {
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < 2; nt++) x[mt][nt][0] = x[mt][nt][1] = x[mt][nt][2] = x[mt][nt][3] = v;
}

__device__ __forceinline__ float e8m0_value(uint32_t byte) { return __uint_as_float(byte << 23); }

// ---- query preparation: one warp per (token, head), a lane owns 4 consecutive channels -------------
__global__ void k_indexer_q_prep(const uint16_t *__restrict__ q, const uint16_t *__restrict__ w_in,
                                 const float *__restrict__ cos_sin, int8_t *__restrict__ q_codes,
                                 float *__restrict__ q_scales, float *__restrict__ w_out, int num_tokens,
                                 int heads, float weight_scale) {
    strata_grid_begin();
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // token * heads + head
    int lane = threadIdx.x & 31;
    if (row >= num_tokens * heads) return;
    int t = row / heads;
    int c = lane * 4;
    const uint16_t *src = q + (int64_t) row * kIdxDim + c;
    uint2 raw = *reinterpret_cast<const uint2 *>(src);
    float x[4] = {bf16_bits_to_float(raw.x & 0xffff), bf16_bits_to_float(raw.x >> 16),
                  bf16_bits_to_float(raw.y & 0xffff), bf16_bits_to_float(raw.y >> 16)};
    rope4<kIdxDim>(x, c, cos_sin + (int64_t) t * 64);  // interleaved RoPE at the token's position
    hadamard128(x, lane);
    float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
    amax = group_max<8>(amax);
    float s = fp4_block_scale(amax);
    uint32_t nib = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) nib |= (uint32_t) fp4_encode(x[i], s) << (4 * i);
    uint32_t lo, hi;
    e2m1x8_to_int8(nib, lo, hi);
    reinterpret_cast<uint32_t *>(q_codes + (int64_t) row * kIdxDim)[lane] = lo;
    if ((lane & 7) == 0) q_scales[(int64_t) row * 4 + (lane >> 3)] = s;
    if (lane == 0) w_out[row] = bf16_round(__fmul_rn(bf16_bits_to_float(w_in[row]), weight_scale));
}

// ---- scores: grid (key tiles, queries); a thread scores one key against all heads of its query ----
struct ScoreArgs {
    const int8_t *q_codes;
    const float *q_scales;
    const float *w;
    const int *query_pos;
    const int *query_seq;
    const int *block_table;
    int table_stride;
    EntryLayout keys;
    uint16_t *scores;
    int64_t score_stride;
    int heads;
    bool one_chain;   // the page kernel may take its one-chain form (STRATA_SCORES_ONE_CHAIN=0: never)
};

// One key's 128 e2m1 codes as int8 (twice the value), and its four block scales.
struct Key {
    uint32_t v[32];
    float scale[4];
};

__device__ __forceinline__ void load_key(const ScoreArgs &a, const int *table, int j, Key &key) {
    int epp = a.keys.entries_per_page;
    const uint8_t *page = a.keys.pool + (int64_t) table[j / epp] * a.keys.page_bytes;
    int e = j % epp;
    const uint4 *kd = reinterpret_cast<const uint4 *>(page + e * a.keys.data_stride);
    uint32_t ksc = *reinterpret_cast<const uint32_t *>(page + a.keys.scale_base + e * a.keys.scale_stride);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        uint4 v = kd[i];
        e2m1x8_to_int8(v.x, key.v[8 * i + 0], key.v[8 * i + 1]);
        e2m1x8_to_int8(v.y, key.v[8 * i + 2], key.v[8 * i + 3]);
        e2m1x8_to_int8(v.z, key.v[8 * i + 4], key.v[8 * i + 5]);
        e2m1x8_to_int8(v.w, key.v[8 * i + 6], key.v[8 * i + 7]);
    }
#pragma unroll
    for (int b = 0; b < 4; b++) key.scale[b] = e8m0_value((ksc >> (8 * b)) & 0xff);
}

// Head h's term of the score: bf16(d * w_h) for d = bf16(q_h . k) > 0, else 0 (adding +0 to the
// running sum, which starts at +0, changes nothing, so skipping and adding zero agree).
__device__ __forceinline__ float head_term(const int8_t *qs, const float *sc, const float *ws, int h, const Key &k) {
    const int4 *qh = reinterpret_cast<const int4 *>(qs + h * kIdxDim);
    float d = 0.f;
#pragma unroll
    for (int b = 0; b < 4; b++) {
        int acc = 0;
        int4 q0 = qh[2 * b], q1 = qh[2 * b + 1];
        acc = __dp4a((int) k.v[8 * b + 0], q0.x, acc);
        acc = __dp4a((int) k.v[8 * b + 1], q0.y, acc);
        acc = __dp4a((int) k.v[8 * b + 2], q0.z, acc);
        acc = __dp4a((int) k.v[8 * b + 3], q0.w, acc);
        acc = __dp4a((int) k.v[8 * b + 4], q1.x, acc);
        acc = __dp4a((int) k.v[8 * b + 5], q1.y, acc);
        acc = __dp4a((int) k.v[8 * b + 6], q1.z, acc);
        acc = __dp4a((int) k.v[8 * b + 7], q1.w, acc);
        d = __fadd_rn(d, __fmul_rn((float) acc, __fmul_rn(sc[h * 4 + b], k.scale[b])));
    }
    d = bf16_round(d);
    return d > 0.f ? bf16_round(__fmul_rn(d, ws[h])) : 0.f;
}

template <int kMaxHeads>
__device__ __forceinline__ void stage_query(const ScoreArgs &a, int qi, int8_t *qs, float *sc, float *ws) {
    const int4 *qsrc = reinterpret_cast<const int4 *>(a.q_codes + (int64_t) qi * a.heads * kIdxDim);
    for (int i = threadIdx.x; i < a.heads * kIdxDim / 16; i += blockDim.x) reinterpret_cast<int4 *>(qs)[i] = qsrc[i];
    for (int i = threadIdx.x; i < a.heads * 4; i += blockDim.x) sc[i] = a.q_scales[(int64_t) qi * a.heads * 4 + i] * 0.25f;
    for (int i = threadIdx.x; i < a.heads; i += blockDim.x) ws[i] = a.w[(int64_t) qi * a.heads + i];
}

// Many queries or candidates: a thread scores one key over all heads.
template <int kMaxHeads>
__global__ void __launch_bounds__(kScoreThreads) k_indexer_scores(ScoreArgs a) {
    strata_grid_begin();
    __shared__ __align__(16) int8_t qs[kMaxHeads * kIdxDim];
    __shared__ float sc[kMaxHeads * 4];
    __shared__ float ws[kMaxHeads];
    int qi = blockIdx.y;
    int visible = (a.query_pos[qi] + 1) / 4;
    int j0 = blockIdx.x * kScoreThreads;
    if (j0 >= visible) return;  // CTA-uniform
    stage_query<kMaxHeads>(a, qi, qs, sc, ws);
    __syncthreads();
    int j = j0 + threadIdx.x;
    if (j >= visible) return;
    Key key;
    load_key(a, a.block_table + (int64_t) a.query_seq[qi] * a.table_stride, j, key);
    float s = 0.f;
    for (int h = 0; h < a.heads; h++) s = __fadd_rn(s, head_term(qs, sc, ws, h, key));
    a.scores[(int64_t) qi * a.score_stride + j] = float_to_bf16_bits(s);
}

// Few queries and candidates (small decode batches): four threads per key split the heads, then one
// sums the terms in head order, so the grid covers more of the GPU and each thread's chain is 4x shorter.
constexpr int kSplitKeys = kScoreThreads / 4;

template <int kMaxHeads>
__global__ void __launch_bounds__(kScoreThreads) k_indexer_scores_split(ScoreArgs a) {
    strata_grid_begin();
    __shared__ __align__(16) int8_t qs[kMaxHeads * kIdxDim];
    __shared__ float sc[kMaxHeads * 4];
    __shared__ float ws[kMaxHeads];
    __shared__ float terms[kSplitKeys * (kMaxHeads + 1)];
    int qi = blockIdx.y;
    int visible = (a.query_pos[qi] + 1) / 4;
    int j0 = blockIdx.x * kSplitKeys;
    if (j0 >= visible) return;  // CTA-uniform
    stage_query<kMaxHeads>(a, qi, qs, sc, ws);
    __syncthreads();
    int kk = threadIdx.x % kSplitKeys, part = threadIdx.x / kSplitKeys;
    int j = j0 + kk;
    int per = (a.heads + 3) / 4;
    if (j < visible) {
        Key key;
        load_key(a, a.block_table + (int64_t) a.query_seq[qi] * a.table_stride, j, key);
        for (int h = part * per; h < min(a.heads, (part + 1) * per); h++)
            terms[kk * (kMaxHeads + 1) + h] = head_term(qs, sc, ws, h, key);
    }
    __syncthreads();
    if (part == 0 && j < visible) {
        float s = 0.f;
        for (int h = 0; h < a.heads; h++) s = __fadd_rn(s, terms[kk * (kMaxHeads + 1) + h]);
        a.scores[(int64_t) qi * a.score_stride + j] = float_to_bf16_bits(s);
    }
}

// Many queries or candidates, 64 heads: int8 tensor cores (mma m16n8k32, s8 x s8 -> s32) on the doubled
// e2m1 codes. Each 32-channel block's dot is the same exact int32 as __dp4a's and is combined in the same
// order, so scores are bit-identical to k_indexer_scores. A CTA stages the query once and scores 256 keys,
// 64 at a time: each warp takes 16 keys x all 64 heads; terms go through shared memory so that one thread
// per key sums its heads in order.
constexpr int kMmaHeads = 64;
constexpr int kMmaKeysPerPass = 64;
constexpr int kMmaPasses = 4;
constexpr int kMmaKeys = kMmaKeysPerPass * kMmaPasses;
constexpr int kKeyRow = 80;                   // staged key: 64 B of nibbles, 4 scale bytes, padding
#ifndef STRATA_SCORES_PPW                      // A/B builds: a fixed number of pages per warp
#define STRATA_SCORES_PPW 0
#endif
#ifdef STRATA_SCORES_PASSES_ONLY               // A/B builds: the 256-key pass kernel instead of the page kernel
constexpr bool kScoresByPages = false;
#else
constexpr bool kScoresByPages = true;
#endif
#ifdef STRATA_SCORES_DP4A_ONLY                 // A/B builds: the __dp4a kernel for every large grid
constexpr bool kScoresOnTensorCores = false;
#else
constexpr bool kScoresOnTensorCores = true;
#endif

__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four e2m1 codes (channels c..c+3 of a staged key, c a multiple of 4) as four int8 (twice the value).
__device__ __forceinline__ uint32_t key_codes4(const uint8_t *key, int c) {
    uint32_t w = *reinterpret_cast<const uint16_t *>(key + c / 2);
    uint32_t lo, hi;
    e2m1x8_to_int8(w, lo, hi);
    return lo;
}

__global__ void __launch_bounds__(128) k_indexer_scores_mma(ScoreArgs a) {
    strata_grid_begin();
    __shared__ __align__(16) int8_t qs[kMmaHeads * kIdxDim];
    __shared__ float sc[kMmaHeads * 4];
    __shared__ float ws[kMmaHeads];
    __shared__ __align__(16) uint8_t keys[kMmaKeysPerPass * kKeyRow];
    __shared__ float terms[kMmaKeysPerPass * (kMmaHeads + 1)];
    const int qi = blockIdx.y;
    const int visible = (a.query_pos[qi] + 1) / 4;
    const int j0 = blockIdx.x * kMmaKeys;
    if (j0 >= visible) return;  // CTA-uniform
    stage_query<kMmaHeads>(a, qi, qs, sc, ws);
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, grp = lane >> 2, tig = lane & 3;
    // A fragments (query heads x channels) of all four m-tiles and blocks stay in registers
    uint32_t A[4][4][4];
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const int8_t *q0 = qs + (16 * mt + grp) * kIdxDim + 32 * b + tig * 4;
            const int8_t *q1 = q0 + 8 * kIdxDim;
            A[mt][b][0] = *reinterpret_cast<const uint32_t *>(q0);
            A[mt][b][1] = *reinterpret_cast<const uint32_t *>(q1);
            A[mt][b][2] = *reinterpret_cast<const uint32_t *>(q0 + 16);
            A[mt][b][3] = *reinterpret_cast<const uint32_t *>(q1 + 16);
        }
    const int *table = a.block_table + (int64_t) a.query_seq[qi] * a.table_stride;
    const int epp = a.keys.entries_per_page;
    // two threads per key (32 bytes of nibbles each, the first also the scales); the next pass's keys are
    // loaded into registers while this pass computes
    const int kk = threadIdx.x >> 1, part = threadIdx.x & 1;
    uint4 next0, next1;
    uint32_t next_scales;
    auto fetch = [&](int pass) {
        int j = j0 + pass * kMmaKeysPerPass + kk;
        if (j < visible) {
            const uint8_t *page = a.keys.pool + (int64_t) table[j / epp] * a.keys.page_bytes;
            int e = j % epp;
            const uint4 *src = reinterpret_cast<const uint4 *>(page + e * a.keys.data_stride) + 2 * part;
            next0 = src[0];
            next1 = src[1];
            next_scales = *reinterpret_cast<const uint32_t *>(page + a.keys.scale_base + e * a.keys.scale_stride);
        } else {
            next0 = next1 = make_uint4(0, 0, 0, 0);
            next_scales = 0x7f7f7f7fu;  // scale 1 for an absent key: its score is never written
        }
    };
    fetch(0);
    for (int pass = 0; pass < kMmaPasses; pass++) {
        const int jb = j0 + pass * kMmaKeysPerPass;
        if (jb >= visible) break;  // CTA-uniform
        uint8_t *dst = keys + kk * kKeyRow;
        reinterpret_cast<uint4 *>(dst)[2 * part] = next0;
        reinterpret_cast<uint4 *>(dst)[2 * part + 1] = next1;
        if (part == 0) *reinterpret_cast<uint32_t *>(dst + 64) = next_scales;
        __syncthreads();
        if (pass + 1 < kMmaPasses) fetch(pass + 1);
        // this warp's keys: n-tile nt holds keys 16*warp + 8*nt + 0..7
        float d[4][2][4];
        fill_tiles(d, 0.f);
#pragma unroll
        for (int b = 0; b < 4; b++) {
            uint32_t B0[2], B1[2];
            float kscale[2][2];                    // [nt][column]: the scales of the keys this lane's C holds
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                const uint8_t *kb = keys + (16 * warp + 8 * nt + grp) * kKeyRow;
                B0[nt] = key_codes4(kb, 32 * b + tig * 4);
                B1[nt] = key_codes4(kb, 32 * b + 16 + tig * 4);
#pragma unroll
                for (int c = 0; c < 2; c++)
                    kscale[nt][c] = e8m0_value(keys[(16 * warp + 8 * nt + 2 * tig + c) * kKeyRow + 64 + b]);
            }
#pragma unroll
            for (int mt = 0; mt < 4; mt++)
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    int acc[4] = {0, 0, 0, 0};
                    mma_s8(acc, A[mt][b], B0[nt], B1[nt]);
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        int head = 16 * mt + grp + 8 * (r >> 1);
                        d[mt][nt][r] = __fadd_rn(d[mt][nt][r],
                                                 __fmul_rn((float) acc[r], __fmul_rn(sc[head * 4 + b], kscale[nt][r & 1])));
                    }
                }
        }
#pragma unroll
        for (int mt = 0; mt < 4; mt++)
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    int head = 16 * mt + grp + 8 * (r >> 1);
                    int key = 16 * warp + 8 * nt + 2 * tig + (r & 1);
                    float dd = bf16_round(d[mt][nt][r]);
                    terms[key * (kMmaHeads + 1) + head] = dd > 0.f ? bf16_round(__fmul_rn(dd, ws[head])) : 0.f;
                }
        __syncthreads();
        if (threadIdx.x < kMmaKeysPerPass && jb + threadIdx.x < visible) {
            float s = 0.f;
#pragma unroll 16
            for (int h = 0; h < kMmaHeads; h++) s = __fadd_rn(s, terms[threadIdx.x * (kMmaHeads + 1) + h]);
            a.scores[(int64_t) qi * a.score_stride + jb + threadIdx.x] = float_to_bf16_bits(s);
        }
        __syncthreads();                          // keys and terms are reused by the next pass
    }
}

// Many queries or candidates, 64 heads, indexer pages of 64 split entries (the cache's layout): each warp
// scores whole pages on its own, so no barrier of the CTA is crossed after the query is staged. The warp's
// lane 0 has the copy engine bring the warp's next pages (values and scales, one page per stage) while the
// warp scores the one before. Per 16 keys the warp runs int8 MMAs over all 64 heads (keys in B straight from
// the staged page: a lane's 4 bytes of a 32-channel block are channels 8t..8t+7, which the staged query's
// channel order matches), packs the head terms as bf16 pairs, and after 32 keys each lane sums one key's 64
// terms in head order. Keys and queries whose block scales allow it take the one-chain form below; otherwise
// the four-term sum, with the same products and the same fp32 operations in the same order as k_indexer_scores:
//   the MMA accumulates on the bits of 1.5 * 2^23, so the int32 it returns is the float 1.5 * 2^23 + dot
//   (|dot| <= 32 * 12 * 12 < 2^22), and subtracting 1.5 * 2^23 gives the dot exactly, with no I2F;
//   d + dot * (sq * sk) is one fma: dot * (sq * sk) is an integer below 2^13 times a power of two, exact;
//   bf16(max(bf16(d), 0) * w) equals the reference's d > 0 ? bf16(d * w) : 0 for finite w.
constexpr int kPageWarps = 4;
constexpr int kPageStages = 2;                             // a third stage costs the SM its third CTA
constexpr int kPageKeys = 64;                              // entries a stage holds
constexpr int kPageData = kPageKeys * 64;                  // values, then the scales at this offset
constexpr int kStageBytes = kPageData + kPageKeys * 4;
constexpr int kQRow = kIdxDim + 16;                        // staged query row: ldmatrix rows hit distinct banks
constexpr int kTermRow = 40;                               // bf16 terms of one head for 32 keys, 8 of padding
constexpr uint32_t kDotBias = 0x4B400000u;                 // 1.5 * 2^23
constexpr float kDotBiasF = 12582912.0f;

struct PageScoreSmem {
    uint8_t stage[kPageWarps][kPageStages][kStageBytes];
    int8_t qs[kMmaHeads * kQRow];           // the query's codes
    int8_t qs1[kMmaHeads * kQRow];          // ... each block's shifted left by its exponent above the head's lowest
    float sc[kMmaHeads * 4];
    float qlow[kMmaHeads];                  // a head's lowest block scale
    float ws[kMmaHeads];
    uint16_t terms[kPageWarps][kMmaHeads * kTermRow];
    uint64_t full[kPageWarps][kPageStages];
    uint32_t q_exp[2][2];                   // lowest / highest query exponent of warps 0 and 1's heads
};

// The one-chain form. A head's term for a key is d = the fp32 sum, block by block, of dot_b * (sq_b * sk_b),
// every scale a power of two. When each side's four exponents lie within kMaxShift of its lowest and every
// product is a normal float, every partial sum is a multiple of 2^E0 (E0 the two lowest exponents' sum) below
// 2^(E0 + 21): fp32 adds them exactly, so d is the exact sum, 2^E0 * sum_b dot_b << (both shifts of b). With
// both sides' codes shifted left by their block's shift (12 << 3 = 96: still int8) one chain of int8 MMAs over
// the 128 channels gives that integer, and one multiply by 2^E0 gives d: the same bits as the four-term sum.
// FP4 blocks of one rotated row have exponents within a step or two of each other, so real keys and queries
// take this form; any 16 keys that do not take the four-term sum.
constexpr uint32_t kMaxShift = 3;

// Four int8 codes (at most 12 in magnitude) times 2^s, s <= kMaxShift: no byte overflows, so a word shift whose
// bits crossing into the next byte are masked off is a per-byte shift (two's complement keeps the sign).
__device__ __forceinline__ uint32_t codes_shl(uint32_t w, uint32_t s, uint32_t mask) { return (w << s) & mask; }
__device__ __forceinline__ uint32_t codes_shl_mask(uint32_t s) { return 0x01010101u * ((0xffu << s) & 0xffu); }

// Smallest and largest of four bytes.
__device__ __forceinline__ void bytes_range(uint32_t w, uint32_t &lo, uint32_t &hi) {
    const uint32_t b0 = w & 0xff, b1 = (w >> 8) & 0xff, b2 = (w >> 16) & 0xff, b3 = w >> 24;
    lo = min(min(b0, b1), min(b2, b3));
    hi = max(max(b0, b1), max(b2, b3));
}


// d = A * B + kDotBias (as int32) for each of the four accumulators: int8 m16n8k32.
__device__ __forceinline__ void mma_s8_biased(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%10,%10,%10};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(kDotBias));
}

__device__ __forceinline__ uint32_t pack_bf16x2(float hi, float lo) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ uint32_t relu_bf16x2(uint32_t v) {
    uint32_t r;
    asm("max.bf16x2 %0, %1, %2;\n" : "=r"(r) : "r"(v), "r"(0u));
    return r;
}

__global__ void __launch_bounds__(kPageWarps * 32, 3) k_indexer_scores_pages(ScoreArgs a, int pages_per_warp) {
    strata_grid_begin();
    extern __shared__ __align__(128) uint8_t smem_raw[];
    PageScoreSmem &sm = *reinterpret_cast<PageScoreSmem *>(smem_raw);
    const int qi = blockIdx.y;
    const int visible = (a.query_pos[qi] + 1) / 4;
    const int epp = a.keys.entries_per_page;
    const int vis_pages = (visible + epp - 1) / epp;
    const int p0 = blockIdx.x * pages_per_warp * kPageWarps;
    if (p0 >= vis_pages) return;  // CTA-uniform
    const int p_end = min(p0 + pages_per_warp * kPageWarps, vis_pages);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, grp = lane >> 2, tig = lane & 3;
    // this warp's pages: p0 + warp + kPageWarps * i for i < mine
    const int mine = p0 + warp < p_end ? (p_end - p0 - warp + kPageWarps - 1) / kPageWarps : 0;
    const int *table = a.block_table + (int64_t) a.query_seq[qi] * a.table_stride;
    uint64_t *full = sm.full[warp];
    const uint32_t data_bytes = epp * 64, scale_bytes = epp * 4;
    auto issue = [&](int i) {  // lane 0: page i of this warp into its stage
        const int s = i % kPageStages;
        const uint8_t *page = a.keys.pool + (int64_t) table[p0 + warp + kPageWarps * i] * a.keys.page_bytes;
        mbar_arrive_expect(&full[s], data_bytes + scale_bytes);
        bulk_load(sm.stage[warp][s], page, data_bytes, &full[s]);
        bulk_load(sm.stage[warp][s] + kPageData, page + a.keys.scale_base, scale_bytes, &full[s]);
    };
    if (lane == 0) {
        for (int s = 0; s < kPageStages; s++) mbar_init(&full[s], 1);
        mbar_init_fence();
        for (int i = 0; i < min(mine, kPageStages); i++) issue(i);
    }
    // the query: block scales times 1/4 (the codes are twice the e2m1 values), head weights, and whether the
    // heads allow the one-chain form (their scales plain powers of two, each head's within kMaxShift)
    int q_ok = 1;
    if (threadIdx.x < kMmaHeads) {
        const int h = threadIdx.x;
        uint32_t e = 0, plain = 1;
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const float v = a.q_scales[((int64_t) qi * kMmaHeads + h) * 4 + b] * 0.25f;
            sm.sc[h * 4 + b] = v;
            const uint32_t bits = __float_as_uint(v);
            e |= ((bits >> 23) & 0xffu) << (8 * b);
            plain &= (bits & 0x807fffffu) == 0;
        }
        uint32_t lo, hi;
        bytes_range(e, lo, hi);
        q_ok = plain && lo >= 1 && hi <= 254 && hi - lo <= kMaxShift;
        sm.qlow[h] = __uint_as_float(lo << 23);
        sm.ws[h] = a.w[(int64_t) qi * kMmaHeads + h];
        lo = __reduce_min_sync(0xffffffffu, lo);
        hi = __reduce_max_sync(0xffffffffu, hi);
        if (lane == 0) sm.q_exp[warp][0] = lo, sm.q_exp[warp][1] = hi;
    }
    const bool q_fast = __syncthreads_and(q_ok) != 0 && a.one_chain;
    // codes into the MMA's k order (channel word 2t of a block -> k word t, 2t + 1 -> 4 + t), as they are and
    // shifted for the one-chain form
    const uint32_t *qsrc = reinterpret_cast<const uint32_t *>(a.q_codes + (int64_t) qi * kMmaHeads * kIdxDim);
    for (int i = threadIdx.x; i < kMmaHeads * kIdxDim / 4; i += blockDim.x) {
        const int h = i >> 5, b = (i >> 3) & 3, cw = i & 7;
        const int dst = 8 * b + ((cw & 1) ? 4 : 0) + (cw >> 1);
        const uint32_t v = qsrc[i];
        reinterpret_cast<uint32_t *>(sm.qs + h * kQRow)[dst] = v;
        if (q_fast) {
            const uint32_t sh = (__float_as_uint(sm.sc[h * 4 + b]) >> 23) - (__float_as_uint(sm.qlow[h]) >> 23);
            reinterpret_cast<uint32_t *>(sm.qs1 + h * kQRow)[dst] = codes_shl(v, sh, codes_shl_mask(sh));
        }
    }
    __syncthreads();
    if (mine == 0) return;
    const uint32_t q_lo = min(sm.q_exp[0][0], sm.q_exp[1][0]), q_hi = max(sm.q_exp[0][1], sm.q_exp[1][1]);
    // this lane's heads in the MMA's C: 16 mt + grp + 8 hh
    float wh[4][2];
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) wh[mt][hh] = sm.ws[16 * mt + grp + 8 * hh];
    const float4 *sq4 = reinterpret_cast<const float4 *>(sm.sc) + grp;  // head grp's four block scales
    // ldmatrix rows of this lane: matrix lane / 8 of an m-tile (rows +8 for matrices 1 and 3, k +16 for 2 and 3)
    const int8_t *qrow = sm.qs + ((lane & 7) + 8 * ((lane >> 3) & 1)) * kQRow + 16 * (lane >> 4);
    const int8_t *qrow1 = qrow + (sm.qs1 - sm.qs);
    const float *qlow = sm.qlow + grp;                          // head grp's lowest block scale
    uint16_t *terms = sm.terms[warp];
    const uint32_t *term_words = reinterpret_cast<const uint32_t *>(terms) + (lane >> 1);
    const uint32_t term_sel = (lane & 1) ? 0x3244u : 0x1044u;  // this lane's key of the pair -> a float's top half
    const int64_t score_row = (int64_t) qi * a.score_stride;
#pragma unroll 1
    for (int i = 0; i < mine; i++) {
        const int s = i % kPageStages;
        mbar_wait(&full[s], (i / kPageStages) & 1);
        const uint8_t *st = sm.stage[warp][s];
        const int page = p0 + warp + kPageWarps * i;
#pragma unroll 1
        for (int k32 = 0; k32 < epp; k32 += 32) {
#pragma unroll 1
            for (int half = 0; half < 2; half++) {
                const int k16 = k32 + 16 * half;
                uint32_t B0[2][4], B1[2][4], ksw[2][2];
#pragma unroll
                for (int nt = 0; nt < 2; nt++) {
                    const uint8_t *key = st + (k16 + 8 * nt + grp) * 64 + 4 * tig;
#pragma unroll
                    for (int b = 0; b < 4; b++) {
                        e2m1x8_to_int8(*reinterpret_cast<const uint32_t *>(key + 16 * b), B0[nt][b], B1[nt][b]);
                    }
#pragma unroll
                    for (int c = 0; c < 2; c++)
                        ksw[nt][c] = *reinterpret_cast<const uint32_t *>(st + kPageData + (k16 + 8 * nt + 2 * tig + c) * 4);
                }
                // key lane % 16 of these 16: whether it allows the one-chain form, its shifts and lowest scale
                uint32_t k_shift, k_lo_bits;
                bool fast;
                {
                    const uint32_t e = *reinterpret_cast<const uint32_t *>(st + kPageData + (k16 + (lane & 15)) * 4);
                    uint32_t lo, hi;
                    bytes_range(e, lo, hi);
                    // ue8m0 bytes 1..254 are 2^(e - 127); every product and partial sum stays a normal float
                    const bool ok = lo >= 1 && hi <= 254 && hi - lo <= kMaxShift && q_lo + lo >= 128 && q_hi + hi <= 360;
                    k_shift = e - lo * 0x01010101u;
                    k_lo_bits = lo << 23;
                    fast = __all_sync(0xffffffffu, ok) && q_fast;
                }
                float d[4][2][4];
                if (fast) {
                    int acc[4][2][4];
                    fill_tiles(acc, (int) kDotBias);
                    uint32_t ksh[2];
#pragma unroll
                    for (int nt = 0; nt < 2; nt++) ksh[nt] = __shfl_sync(0xffffffffu, k_shift, 8 * nt + grp);
#pragma unroll
                    for (int b = 0; b < 4; b++) {
#pragma unroll
                        for (int nt = 0; nt < 2; nt++) {
                            const uint32_t sh = (ksh[nt] >> (8 * b)) & 0xff, mask = codes_shl_mask(sh);
                            B0[nt][b] = codes_shl(B0[nt][b], sh, mask);
                            B1[nt][b] = codes_shl(B1[nt][b], sh, mask);
                        }
#pragma unroll
                        for (int mt = 0; mt < 4; mt++) {
                            uint32_t A[4];
                            ldmatrix_x4(A[0], A[1], A[2], A[3], qrow1 + 16 * mt * kQRow + 32 * b);
#pragma unroll
                            for (int nt = 0; nt < 2; nt++) mma_s8(acc[mt][nt], A, B0[nt][b], B1[nt][b]);
                        }
                    }
                    float klow[2][2];
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
#pragma unroll
                        for (int c = 0; c < 2; c++)
                            klow[nt][c] = __uint_as_float(__shfl_sync(0xffffffffu, k_lo_bits, 8 * nt + 2 * tig + c));
#pragma unroll
                    for (int mt = 0; mt < 4; mt++) {
                        const float ql[2] = {qlow[16 * mt], qlow[16 * mt + 8]};
#pragma unroll
                        for (int nt = 0; nt < 2; nt++)
#pragma unroll
                            for (int r = 0; r < 4; r++)
                                d[mt][nt][r] = __fmul_rn(__fsub_rn(__int_as_float(acc[mt][nt][r]), kDotBiasF),
                                                         __fmul_rn(ql[r >> 1], klow[nt][r & 1]));
                    }
                } else {
                    fill_tiles(d, 0.f);
#pragma unroll
                    for (int b = 0; b < 4; b++) {
                        float ks[2][2];
#pragma unroll
                        for (int nt = 0; nt < 2; nt++)
#pragma unroll
                            for (int c = 0; c < 2; c++) ks[nt][c] = e8m0_value((ksw[nt][c] >> (8 * b)) & 0xff);
#pragma unroll
                        for (int mt = 0; mt < 4; mt++) {
                            uint32_t A[4];
                            ldmatrix_x4(A[0], A[1], A[2], A[3], qrow + 16 * mt * kQRow + 32 * b);
                            const float sqb[2] = {reinterpret_cast<const float *>(sq4 + 16 * mt)[b],
                                                  reinterpret_cast<const float *>(sq4 + 16 * mt + 8)[b]};
#pragma unroll
                            for (int nt = 0; nt < 2; nt++) {
                                int acc[4];
                                mma_s8_biased(acc, A, B0[nt][b], B1[nt][b]);
#pragma unroll
                                for (int r = 0; r < 4; r++) {
                                    const float dot = __fsub_rn(__int_as_float(acc[r]), kDotBiasF);
                                    const float y = __fmul_rn(sqb[r >> 1], ks[nt][r & 1]);
                                    d[mt][nt][r] = __fmaf_rn(dot, y, d[mt][nt][r]);
                                }
                            }
                        }
                    }
                }
                // terms[head][key]: keys 2 tig and 2 tig + 1 of an n-tile as one bf16 pair
#pragma unroll
                for (int mt = 0; mt < 4; mt++)
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
#pragma unroll
                        for (int hh = 0; hh < 2; hh++) {
                            const uint32_t dd = relu_bf16x2(pack_bf16x2(d[mt][nt][2 * hh + 1], d[mt][nt][2 * hh]));
                            const float lo = __fmul_rn(__uint_as_float(dd << 16), wh[mt][hh]);
                            const float hi = __fmul_rn(__uint_as_float(dd & 0xffff0000u), wh[mt][hh]);
                            const int h = 16 * mt + grp + 8 * hh;
                            *reinterpret_cast<uint32_t *>(terms + h * kTermRow + 16 * half + 8 * nt + 2 * tig) =
                                pack_bf16x2(hi, lo);
                        }
            }
            __syncwarp();
            float sum = 0.f;
#pragma unroll 16
            for (int h = 0; h < kMmaHeads; h++)
                sum = __fadd_rn(sum, __uint_as_float(__byte_perm(term_words[h * (kTermRow / 2)], 0u, term_sel)));
            const int j = page * epp + k32 + lane;
            if (j < visible) a.scores[score_row + j] = float_to_bf16_bits(sum);
            __syncwarp();  // the terms are rewritten for the next 32 keys; the stage may be refilled
        }
        if (lane == 0 && i + kPageStages < mine) issue(i + kPageStages);
    }
}

// ---- exact top-k: a cluster of up to 8 CTAs per query, radix select on the 16-bit score ----------
// Each CTA keeps its slice of the scores in shared memory (thread t owns 32 consecutive candidates, so
// thread order within the cluster is candidate order); histograms and counts are exchanged through
// distributed shared memory. Passes: high byte, low byte (-> the threshold score), then per thread the
// number of scores above / equal to the threshold, scanned over the cluster, then the writes: every
// score above the threshold, and the lowest-index ones equal to it.
constexpr int kTopkThreads = 1024;
constexpr int kPerThread = 32;
constexpr int kSlice = kTopkThreads * kPerThread;       // candidates per CTA
constexpr int kMaxRanks = 16;                           // a non-portable cluster size (Hopper allows 16)
constexpr size_t kTopkSmem = (size_t) (kSlice + kSlice / 4) * 2;
// slice position -> shared memory position: 16 B of padding after every 32 scores, so threads reading
// their own consecutive runs do not all land on the same banks
__device__ __forceinline__ int padded(int l) { return l + (l >> 5) * 8; }

// bf16 bits -> unsigned key that orders like the float value (no -0 or NaN among scores)
__device__ __forceinline__ uint32_t order_key(uint32_t b) { return (b & 0x8000u) ? (~b & 0xffffu) : (b | 0x8000u); }

struct TopkArgs {
    const uint16_t *scores;
    int64_t score_stride;
    const int *query_pos;
    int k;
    int *out_idx;              // [Q, k] candidate indices, -1 past the selection
    // optional: the selection as tagged slots of the attention index list
    const int *query_seq;
    const int *block_table;
    int table_stride;
    int entries_per_page;
    int *attn_list;
    int64_t list_stride;
    int list_offset;
    int tag;
};

// One CTA per query (kClustered = false, plain barriers) or a cluster of CTAs per query.
template <bool kClustered>
struct Team {
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __device__ int rank() const { return kClustered ? (int) cluster.block_rank() : 0; }
    __device__ int size() const { return kClustered ? (int) cluster.num_blocks() : 1; }
    __device__ void sync() const {
        if constexpr (kClustered) cluster.sync(); else __syncthreads();
    }
    __device__ void arrive() const {
        if constexpr (kClustered) cluster.barrier_arrive();
    }
    __device__ void wait() const {
        if constexpr (kClustered) cluster.barrier_wait();
    }
    template <typename T>
    __device__ T *at(T *p, int r) const {
        if constexpr (kClustered) return cluster.map_shared_rank(p, r); else return p;
    }
};

template <bool kClustered>
__global__ void __launch_bounds__(kTopkThreads) k_topk(TopkArgs a) {
    strata_grid_begin();
    Team<kClustered> cluster;
    extern __shared__ __align__(16) uint16_t keys[];
    __shared__ int cta_hist[4][16];
    __shared__ int warp_eq[32];
    __shared__ int gt_counter;
    const int rank = cluster.rank(), ranks = cluster.size();
    const int qi = blockIdx.y;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int n = (a.query_pos[qi] + 1) / 4;
    const int k = min(a.k, n);
    const uint16_t *sc = a.scores + (int64_t) qi * a.score_stride;
    int *out = a.out_idx + (int64_t) qi * a.k;
    int *list = a.attn_list ? a.attn_list + (int64_t) qi * a.list_stride + a.list_offset : nullptr;
    const int *table = a.attn_list ? a.block_table + (int64_t) a.query_seq[qi] * a.table_stride : nullptr;
    auto emit = [&](int pos, int j) {
        out[pos] = j;
        if (list) {
            uint32_t slot = (uint32_t) table[j / a.entries_per_page] * (uint32_t) a.entries_per_page
                          + (uint32_t) (j % a.entries_per_page);
            list[pos] = (int) (((uint32_t) a.tag << 30) | slot);
        }
    };
    if (rank == 0) {
        for (int i = k + tid; i < a.k; i += blockDim.x) {
            out[i] = -1;
            if (list) list[i] = -1;
        }
    }
    if (k == n) {  // everything visible is selected (cluster-uniform: no cluster barrier is reached)
        for (int j = rank * blockDim.x + tid; j < n; j += ranks * blockDim.x) emit(j, j);
        return;
    }
    // this CTA's slice, rounded to whole uint4 loads
    const int per_rank = ((n + ranks - 1) / ranks + 7) & ~7;
    const int s0 = min(n, rank * per_rank), s1 = min(n, s0 + per_rank);
    for (int e = s0 + tid * 8; e < s1; e += blockDim.x * 8) {
        uint4 v = *reinterpret_cast<const uint4 *>(sc + e);
        int local = e - s0;
        *reinterpret_cast<uint4 *>(keys + padded(local)) = v;
    }
    if (tid < 4 * 16) cta_hist[tid / 16][tid % 16] = 0;
    if (tid == 0) gt_counter = 0;
    __syncthreads();                                      // keys staged, counters zeroed
    // per thread as many consecutive candidates as the slice needs (<= 32): loops stop at `steps`
    const int steps = (per_rank + kTopkThreads - 1) / kTopkThreads;
    const int lo = s0 + tid * steps;                      // this thread's candidates [lo, lo + cnt)
    const int cnt = max(0, min(s1 - lo, steps));
    uint32_t kp[kPerThread / 2] = {};                     // two order keys per register
#pragma unroll
    for (int i = 0; i < kPerThread; i++) {
        if (i >= steps) break;
        uint32_t key = order_key(keys[padded(tid * steps + i)]);
        kp[i >> 1] |= key << ((i & 1) * 16);
    }
#define KV(i) ((kp[(i) >> 1] >> (((i) & 1) * 16)) & 0xffffu)
    // Radix select, four 4-bit digits from the top. A thread counts its keys per digit in registers
    // (16 8-bit counters in four words), a warp sums them with __reduce_add_sync, and each CTA publishes its
    // 16 counts in shared memory; after one cluster barrier per digit every warp reads all CTAs' counts
    // itself. The counts also give each CTA's share of the keys above and equal to the final threshold, so
    // no further exchange is needed.
    uint32_t prefix = 0;
    int above = 0;                                        // keys above the prefix range, whole cluster
    int gt_before = 0;                                    // ... of them in CTAs of lower rank
    int last_digit = 0;
#pragma unroll 1
    for (int d = 0; d < 4; d++) {
        const int shift = 12 - 4 * d;
        uint32_t c[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int i = 0; i < kPerThread; i++) {
            if (i >= steps) break;
            uint32_t key = KV(i);
            bool in = i < cnt && (key >> (shift + 4)) == prefix;
            uint32_t dig = (key >> shift) & 15u;
            uint32_t inc = in ? 1u << ((dig & 3u) * 8) : 0u;
#pragma unroll
            for (int w = 0; w < 4; w++) c[w] += (dig >> 2) == (uint32_t) w ? inc : 0u;
        }
        // lanes j < 8 publish the two digits of pair word j: word w's even bytes (digits 4w, 4w+2) and odd bytes
#pragma unroll
        for (int j = 0; j < 8; j++) {
            uint32_t pair = (c[j >> 1] >> ((j & 1) * 8)) & 0x00ff00ffu;
            uint32_t sum = __reduce_add_sync(0xffffffffu, pair);
            if (lane == j && sum) {
                int d0 = 4 * (j >> 1) + (j & 1);
                if (sum & 0xffffu) atomicAdd(&cta_hist[d][d0], (int) (sum & 0xffffu));
                if (sum >> 16) atomicAdd(&cta_hist[d][d0 + 2], (int) (sum >> 16));
            }
        }
        cluster.sync();
        // lane b and b + 16 read digit b of every other rank (independent loads, so one remote round trip)
        int total = 0, before = 0;                        // lane b < 16: digit b over the cluster / lower ranks
#pragma unroll
        for (int j = 0; j < kMaxRanks / 2; j++) {
            int r = (lane >> 4) + 2 * j;
            int v = r < ranks ? cluster.at(&cta_hist[d][0], r)[lane & 15] : 0;
            total += v;
            before += r < rank ? v : 0;
        }
        total += __shfl_xor_sync(0xffffffffu, total, 16);
        before += __shfl_xor_sync(0xffffffffu, before, 16);
        int suffix = total;                               // keys of the cluster whose digit is >= lane
        int suffix_before = before;
#pragma unroll
        for (int m = 1; m < 16; m <<= 1) {
            int v = __shfl_down_sync(0xffffffffu, suffix, m);
            int u = __shfl_down_sync(0xffffffffu, suffix_before, m);
            if (lane + m < 16) {
                suffix += v;
                suffix_before += u;
            }
        }
        int need = k - above;
        uint32_t who = __ballot_sync(0xffffffffu, lane < 16 && suffix - total < need && suffix >= need);
        int digit = __ffs(who) - 1;
        above += __shfl_sync(0xffffffffu, suffix - total, digit);
        gt_before += __shfl_sync(0xffffffffu, suffix_before - before, digit);
        last_digit = digit;
        prefix = (prefix << 4) | (uint32_t) digit;
    }
    const uint32_t thr = prefix;
    const int greater = above;                            // scores above the threshold, whole cluster
    const int need_eq = k - greater;                      // equal scores to take, lowest index first
    // equal keys in CTAs of lower rank: their last-digit count of the threshold digit
    int eq_before = lane < rank ? cluster.at(&cta_hist[3][0], lane)[last_digit] : 0;
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) eq_before += __shfl_xor_sync(0xffffffffu, eq_before, m);
    // done with other CTAs' shared memory: arrive now, wait (so no CTA leaves while read) at the end
    cluster.arrive();
    // per thread equal count, scanned in candidate order within the CTA
    int eq = 0;
#pragma unroll
    for (int i = 0; i < kPerThread; i++) {
        if (i >= steps) break;
        eq += i < cnt && KV(i) == thr;
    }
    int eq_incl = eq;
#pragma unroll
    for (int m = 1; m < 32; m <<= 1) {
        int v = __shfl_up_sync(0xffffffffu, eq_incl, m);
        if (lane >= m) eq_incl += v;
    }
    if (lane == 31) warp_eq[warp] = eq_incl;
    __syncthreads();
    int eq_base = eq_before;
    for (int w = 0; w < warp; w++) eq_base += warp_eq[w];
    // writes: above-threshold keys at positions [gt_before, ...) in any order, ties in candidate order
    int rank_eq = eq_base + eq_incl - eq;
#pragma unroll
    for (int i = 0; i < kPerThread; i++) {
        if (i >= steps) break;
        if (i < cnt) {
            uint32_t key = KV(i);
            if (key > thr) {
                emit(gt_before + atomicAdd(&gt_counter, 1), lo + i);
            } else if (key == thr) {
                if (rank_eq < need_eq) emit(greater + rank_eq, lo + i);
                rank_eq++;
            }
        }
    }
    cluster.wait();
#undef KV
}

// The page kernel copies a page's values and scales whole: split 64-byte values and 4-byte scales, 16-byte
// aligned, 64 entries a page (a 256-token block at ratio 4: the only page these kernels were checked on).
bool scores_by_pages(const EntryLayout &k) {
    return k.entries_per_page == kPageKeys && k.data_stride == 64 && k.scale_stride == 4
           && k.scale_base % 16 == 0 && k.page_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(k.pool) % 16 == 0;
}

// Pages per warp: a warp's first page waits for its copy with nothing to overlap, so two or more whenever that
// still gives every SM a CTA; up to 8 while more than one wave of CTAs (three resident per SM) remains.
int pages_per_warp(int64_t all_pages, int sms) {
#if STRATA_SCORES_PPW > 0
    (void) all_pages, (void) sms;
    return STRATA_SCORES_PPW;
#else
    if (all_pages < (int64_t) 2 * kPageWarps * sms) return 1;
    return (int) std::max<int64_t>(2, std::min<int64_t>(8, all_pages / ((int64_t) kPageWarps * 3 * sms)));
#endif
}

}  // namespace

extern "C" {

int strata_indexer_q_prep(int64_t q, int64_t w, int64_t rope_cos_sin, int64_t q_codes, int64_t q_scales,
                          int64_t w_out, int num_tokens, int num_heads, float weight_scale, int64_t stream) {
    if (num_tokens <= 0) return 0;
    int rows = num_tokens * num_heads;
    int warps = 8;
    strata_launch(k_indexer_q_prep, (rows + warps - 1) / warps, warps * 32, 0, (cudaStream_t) stream,
        (const uint16_t *) q, (const uint16_t *) w, (const float *) rope_cos_sin, (int8_t *) q_codes,
        (float *) q_scales, (float *) w_out, num_tokens, num_heads, weight_scale);
    STRATA_LAUNCH_CHECK();
    return 0;
}

// Whether the scores kernel may take its one-chain form (A/B measurements: STRATA_SCORES_ONE_CHAIN=0). Read once.
static bool one_chain_enabled() {
    static const bool enabled = [] {
        const char *e = getenv("STRATA_SCORES_ONE_CHAIN");
        return !(e != nullptr && strcmp(e, "0") == 0);
    }();
    return enabled;
}

int strata_indexer_scores(int64_t q_codes, int64_t q_scales, int64_t w, int num_heads, int64_t query_pos,
                          int64_t query_seq, int64_t block_table, int table_stride, int64_t key_pool,
                          int64_t key_page_bytes, int entries_per_page, int data_stride, int scale_base,
                          int scale_stride, int64_t scores, int64_t score_stride, int num_queries,
                          int max_candidates, int64_t stream) {
    if (num_queries <= 0 || max_candidates <= 0) return 0;
    if (num_heads > 128 || num_heads <= 0) return (int) cudaErrorInvalidValue;
    ScoreArgs a{(const int8_t *) q_codes, (const float *) q_scales, (const float *) w, (const int *) query_pos,
                (const int *) query_seq, (const int *) block_table, table_stride,
                EntryLayout{(uint8_t *) key_pool, key_page_bytes, entries_per_page, data_stride, scale_base,
                            scale_stride},
                (uint16_t *) scores, score_stride, num_heads, one_chain_enabled()};
    const int sms = strata_sm_count();
    int64_t whole = (int64_t) num_queries * ((max_candidates + kScoreThreads - 1) / kScoreThreads);
    cudaStream_t st = (cudaStream_t) stream;
    const bool by_pages = num_heads == kMmaHeads && kScoresOnTensorCores && kScoresByPages && scores_by_pages(a.keys);
    // few queries: the page kernel once there are two pages per SM (one query at 128K: 14.4 -> 8.9 us), below
    // that the split kernel (one query at 8K: 6.5 against 8.6)
    const int64_t all_pages = by_pages ? (int64_t) num_queries * ((max_candidates + kPageKeys - 1) / kPageKeys) : 0;
    if (whole < 2 * sms && num_heads <= 64 && all_pages < 2 * sms) {
        dim3 grid((max_candidates + kSplitKeys - 1) / kSplitKeys, num_queries);
        strata_launch(k_indexer_scores_split<64>, grid, kScoreThreads, 0, st, a);
    } else if (by_pages) {
        const int epp = entries_per_page;
        const int64_t pages = (max_candidates + epp - 1) / epp;
        const int ppw = pages_per_warp(num_queries * pages, sms);
        const int per_cta = ppw * kPageWarps;
        cudaError_t e = cudaFuncSetAttribute(k_indexer_scores_pages, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int) sizeof(PageScoreSmem));
        if (e != cudaSuccess) return (int) e;
        dim3 grid((unsigned) ((pages + per_cta - 1) / per_cta), num_queries);
        strata_launch(k_indexer_scores_pages, grid, kPageWarps * 32, sizeof(PageScoreSmem), st, a, ppw);
    } else if (num_heads == kMmaHeads && kScoresOnTensorCores) {
        dim3 grid((max_candidates + kMmaKeys - 1) / kMmaKeys, num_queries);
        strata_launch(k_indexer_scores_mma, grid, 128, 0, st, a);
    } else {
        dim3 grid((max_candidates + kScoreThreads - 1) / kScoreThreads, num_queries);
        if (num_heads <= 64) strata_launch(k_indexer_scores<64>, grid, kScoreThreads, 0, st, a);
        else strata_launch(k_indexer_scores<128>, grid, kScoreThreads, 0, st, a);
    }
    STRATA_LAUNCH_CHECK();
    return 0;
}

int strata_indexer_topk(int64_t scores, int64_t score_stride, int64_t query_pos, int k, int64_t out_idx,
                        int64_t query_seq, int64_t block_table, int table_stride, int entries_per_page,
                        int64_t attn_list, int64_t list_stride, int list_offset, int tag, int num_queries,
                        int max_candidates, int64_t stream) {
    if (num_queries <= 0) return 0;
    if (k <= 0 || tag < 0 || tag > 2 || score_stride % 8 != 0)
        return (int) cudaErrorInvalidValue;
    TopkArgs a{(const uint16_t *) scores, score_stride, (const int *) query_pos, k, (int *) out_idx,
               (const int *) query_seq, (const int *) block_table, table_stride, entries_per_page,
               (int *) attn_list, list_stride, list_offset, tag};
    // more CTAs per query for more candidates: about 8K candidates per CTA, up to 16 (a non-portable
    // cluster size, allowed on Hopper; 8 where it is refused); one CTA needs no cluster at all
    cudaError_t e = cudaFuncSetAttribute(k_topk<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kTopkSmem);
    if (e != cudaSuccess) return (int) e;
    e = cudaFuncSetAttribute(k_topk<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kTopkSmem);
    if (e != cudaSuccess) return (int) e;
    int max_ranks = cudaFuncSetAttribute(k_topk<true>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess
                    ? kMaxRanks : 8;
    cudaGetLastError();
    const int sms = strata_sm_count();
    // 16-CTA clusters only pay off while they all fit at once (few queries); otherwise 8 schedule better
    if ((int64_t) num_queries * kMaxRanks > sms && max_candidates <= 8 * kSlice) max_ranks = 8;
    if (max_candidates > max_ranks * kSlice) return (int) cudaErrorInvalidValue;
    // about 8K candidates per CTA, but a CTA holds a whole SM (1,024 threads of 62 registers): beyond one CTA per
    // SM the clusters run in waves, so more ranks than the SMs allow each query only add cluster barriers
    const int fewest = (max_candidates + kSlice - 1) / kSlice;
    const int per_query = (int) std::max<int64_t>(1, sms / num_queries);
    int ranks = max(fewest, min(max_ranks, min(per_query, (max_candidates + 8191) / 8192)));
    if (ranks == 1) {
        strata_launch(k_topk<false>, dim3(1, num_queries), kTopkThreads, kTopkSmem, (cudaStream_t) stream, a);
        STRATA_LAUNCH_CHECK();
        return 0;
    }
    e = strata_launch_cluster(k_topk<true>, dim3(ranks, num_queries), dim3(kTopkThreads), kTopkSmem,
                              (cudaStream_t) stream, ranks, a);
    if (e != cudaSuccess) return (int) e;
    STRATA_LAUNCH_CHECK();
    return 0;
}

}  // extern "C"
