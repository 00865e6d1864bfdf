// The model's glue kernels: embedding, hyper-connections, RMSNorm, attention lists, KV staging.
// Arithmetic mirrors the CPU backend operation by operation (__fmul_rn/__fadd_rn where Java rounds each
// step, double where it computes in double), so the GPU differs from it only in summation order.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include "strata_cuda.h"
#include "numerics.cuh"

using namespace strata;

namespace {

constexpr int kThreads = 256;
constexpr int kNormThreads = 512;  // the per-token hyper-connection kernels: 8 channels each at dim 4096
constexpr int kMaxHc = 4;  // V4's hc_mult; a larger one is refused with cudaErrorInvalidValue
constexpr int kMaxMix = (2 + kMaxHc) * kMaxHc;

__device__ __forceinline__ float load_bf16(const uint16_t *p) { return bf16_bits_to_float(*p); }

// Sum of one value per thread over the first `team` threads of the CTA (a multiple of 32; all of them get the
// result), synchronising on barrier 1 only, so other warps of the CTA can work meanwhile.
__device__ __forceinline__ void team_sync(int team) { asm volatile("bar.sync 1, %0;" ::"r"(team) : "memory"); }
__device__ float team_sum(float v, float *red, int team) {
    v = group_sum<32>(v);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    team_sync(team);
    if (lane == 0) red[warp] = v;
    team_sync(team);
    float s = 0.f;
    if (threadIdx.x < 32) {
        s = threadIdx.x < team / 32 ? red[threadIdx.x] : 0.f;
        s = group_sum<32>(s);
        if (threadIdx.x == 0) red[0] = s;
    }
    team_sync(team);
    return red[0];
}

// 1 / sqrt(mean + eps) as the CPU computes it: the mean and eps in float, the root and quotient in double.
__device__ __forceinline__ float inv_rms(float sum_squares, int n, float eps) {
    float v = __fadd_rn(__fdiv_rn(sum_squares, (float) n), eps);
    return (float) (1.0 / sqrt((double) v));
}

__device__ __forceinline__ float sigmoid(float x) { return (float) (1.0 / (1.0 + exp(-(double) x))); }

__global__ void k_embed(const int *tokens, const uint16_t *embed, uint16_t *out, int dim, int hc) {
    strata_grid_begin();
    int t = blockIdx.x;
    const uint16_t *row = embed + (int64_t) tokens[t] * dim;
    uint16_t *dst = out + (int64_t) t * hc * dim;
    if (dim % 8 == 0 && ((reinterpret_cast<uintptr_t>(embed) | reinterpret_cast<uintptr_t>(out)) & 15) == 0) {
        // 16-byte rows: one load per 8 channels and thread (one round at dim 4096)
        for (int d = threadIdx.x * 8; d < dim; d += blockDim.x * 8) {
            const uint4 v = *reinterpret_cast<const uint4 *>(row + d);
            for (int k = 0; k < hc; k++) *reinterpret_cast<uint4 *>(dst + k * dim + d) = v;
        }
        return;
    }
    for (int d = threadIdx.x; d < dim; d += blockDim.x) {
        uint16_t v = row[d];
        for (int k = 0; k < hc; k++) dst[k * dim + d] = v;
    }
}

// One RMSNorm over rows: x and out with row strides (elements), weights w or none; q, when set, receives the
// output FP8-round-tripped per 128 channels (row stride n, n % 128 == 0): the input of the FP8/FP4 linears that
// read it, which then need no round trip of their own.
struct NormRows {
    const uint16_t *x;
    int64_t xs;
    const float *w;
    uint16_t *out;
    int64_t os;
    int n;
    uint16_t *q;
};

// A warp's 128-channel block of src (bf16, lane 4 channels) FP8-round-tripped into dst, as k_act_fp8_roundtrip.
__device__ __forceinline__ void roundtrip_block128(const uint16_t *src, uint16_t *dst) {
    const int lane = threadIdx.x & 31;
    float v[4];
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = load_bf16(src + lane * 4 + i);
    fp8_roundtrip4(v, fp8_block_scale(warp_amax128(v)));
#pragma unroll
    for (int i = 0; i < 4; i++) dst[lane * 4 + i] = float_to_bf16_bits(v[i]);
}

// Row blockIdx.x of norm blockIdx.y (two norms of one step in one launch: the q latent's and the K=V row's).
__global__ void k_rms_norm(NormRows first, NormRows second, float eps) {
    strata_grid_begin();
    __shared__ float red[32];
    const bool b = blockIdx.y != 0;  // the norm this CTA normalises a row of
    const uint16_t *x = b ? second.x : first.x;
    const float *w = b ? second.w : first.w;
    uint16_t *out = b ? second.out : first.out;
    const int n = b ? second.n : first.n;
    const int64_t xs = b ? second.xs : first.xs, os = b ? second.os : first.os;
    const uint16_t *row = x + blockIdx.x * xs;
    float ss = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = load_bf16(row + i);
        ss = __fmaf_rn(v, v, ss);
    }
    float inv = inv_rms(team_sum(ss, red, blockDim.x), n, eps);
    uint16_t *dst = out + blockIdx.x * os;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = __fmul_rn(load_bf16(row + i), inv);
        dst[i] = float_to_bf16_bits(w ? __fmul_rn(w[i], v) : v);
    }
    uint16_t *q = b ? second.q : first.q;
    if (q != nullptr) {  // uniform over the CTA: each warp round-trips whole blocks of the row it has just written
        __syncthreads();
        for (int k = threadIdx.x >> 5; k < n / 128; k += blockDim.x >> 5) {
            roundtrip_block128(dst + k * 128, q + blockIdx.x * (int64_t) n + k * 128);
        }
    }
}

// Channels d..d+7 of the pre-mix from the streams' 16-byte loads v[k]: s[i] = bf16(sum_k pre_k h[k][d + i]), and
// their squares added to ss in channel order.
__device__ __forceinline__ void premix8(const uint4 (&v)[kMaxHc], const float *pre, int hc, float (&s)[8], float &ss) {
#pragma unroll
    for (int i = 0; i < 8; i++) s[i] = 0.f;
#pragma unroll
    for (int k = 0; k < kMaxHc; k++) {
        if (k < hc) {
            const uint32_t w[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const float hv = __uint_as_float((i & 1) ? (w[i >> 1] & 0xffff0000u) : (w[i >> 1] << 16));
                s[i] = __fadd_rn(s[i], __fmul_rn(pre[k], hv));
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        s[i] = bf16_round(s[i]);
        ss = __fmaf_rn(s[i], s[i], ss);
    }
}

// Eight normalised channels as bf16: bf16(w_i * (s_i * inv)), w from the two float4 loads of the norm weights.
__device__ __forceinline__ uint4 norm8(const float (&s)[8], float4 w0, float4 w1, float inv) {
    const float nv[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    uint32_t o[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint32_t lo = float_to_bf16_bits(__fmul_rn(nv[2 * i], __fmul_rn(s[2 * i], inv)));
        const uint32_t hi = float_to_bf16_bits(__fmul_rn(nv[2 * i + 1], __fmul_rn(s[2 * i + 1], inv)));
        o[i] = lo | (hi << 16);
    }
    return make_uint4(o[0], o[1], o[2], o[3]);
}

// x = bf16(sum_k pre_k h[k]) into smem, then the weighted RMSNorm of it into out (bf16), by the first `team`
// threads of the CTA. Eight channels per thread and step when dim allows: all of a step's loads are
// independent, so the block waits for memory about once per step rather than once per channel.
__device__ void premix_norm(const uint16_t *h, const float *pre, int hc, int dim, const float *norm, float eps,
                            float *xs, float *red, uint16_t *out, int team) {
    float ss = 0.f;
    if (dim % 8 == 0) {
        for (int d = threadIdx.x * 8; d < dim; d += team * 8) {
            uint4 v[kMaxHc];
#pragma unroll
            for (int k = 0; k < kMaxHc; k++) {
                if (k < hc) v[k] = *reinterpret_cast<const uint4 *>(h + (int64_t) k * dim + d);
            }
            float s[8];
            premix8(v, pre, hc, s, ss);
#pragma unroll
            for (int i = 0; i < 8; i++) xs[d + i] = s[i];
        }
    } else {
        for (int d = threadIdx.x; d < dim; d += team) {
            float s = 0.f;
            for (int k = 0; k < hc; k++) s = __fadd_rn(s, __fmul_rn(pre[k], load_bf16(h + k * dim + d)));
            s = bf16_round(s);
            xs[d] = s;
            ss = __fmaf_rn(s, s, ss);
        }
    }
    float inv = inv_rms(team_sum(ss, red, team), dim, eps);
    if (dim % 8 == 0) {
        for (int d = threadIdx.x * 8; d < dim; d += team * 8) {
            const float s[8] = {xs[d], xs[d + 1], xs[d + 2], xs[d + 3], xs[d + 4], xs[d + 5], xs[d + 6], xs[d + 7]};
            *reinterpret_cast<uint4 *>(out + d) = norm8(s, *reinterpret_cast<const float4 *>(norm + d),
                                                        *reinterpret_cast<const float4 *>(norm + d + 4), inv);
        }
    } else {
        for (int d = threadIdx.x; d < dim; d += team) {
            out[d] = float_to_bf16_bits(__fmul_rn(norm[d], __fmul_rn(xs[d], inv)));
        }
    }
}

// The mixes' dot products fn [rows, width] . h (bf16 [width]) and h's sum of squares, split over CTAs:
// CTA (split, i) sums the products of its slice of the width for the token row src[i] (or i) and writes
// rows + 1 partials (the last one is the sum of squares) to partials[i][split]. One token's mixes read
// 1.5 MB of fp32 weights at V4-Flash's width: one CTA per token would leave all but a few SMs idle.
constexpr int kMixSplitWidth = 1024;  // columns per CTA: 256 threads x 4
constexpr int kMaxMixSplits = 64;
constexpr int kPartialStride = 32;    // floats per (token, split): kMaxMix + 1 rounded up
constexpr int kMixRows = 6;           // below kMixGroupsMaxTokens tokens, fn rows per CTA: V4's 24 in four groups
constexpr int kMixGroupsMaxTokens = 16;
constexpr int kMixTokens = 2;         // tokens per CTA from kMixTokensMin tokens (4: 128 registers and spills)
constexpr int kMixTokensMin = 64;

inline int mix_splits(int width) {
    int s = (width + kMixSplitWidth - 1) / kMixSplitWidth;
    return s < 1 ? 1 : (s > kMaxMixSplits ? kMaxMixSplits : s);
}

// The sub-layer output folded back into the streams (k_hc_post's arithmetic) when the partials kernel computes
// them itself: y bf16 [n, dim], res bf16 [n, hc*dim], mix as the previous pre wrote it.
struct PostSource {
    const uint16_t *y, *res;
    const float *mix;
    int hc, dim;
};

// Four streams values h[t, c..c+3] (one stream: dim % 4 == 0) of the post, bf16-rounded as k_hc_post stores them.
__device__ __forceinline__ uint2 post_values(const PostSource &p, int t, int c) {
    const int k = c / p.dim, d = c - k * p.dim, mw = 2 * p.hc + p.hc * p.hc;
    const float *m = p.mix + (int64_t) t * mw;
    const float post = m[p.hc + k];
    const uint2 yr = *reinterpret_cast<const uint2 *>(p.y + (int64_t) t * p.dim + d);
    uint2 rr[kMaxHc];
#pragma unroll
    for (int j = 0; j < kMaxHc; j++) {
        if (j < p.hc) rr[j] = *reinterpret_cast<const uint2 *>(p.res + ((int64_t) t * p.hc + j) * p.dim + d);
    }
    uint16_t out[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        auto half = [e](uint2 v) { const uint32_t w = e < 2 ? v.x : v.y; return (e & 1) ? w >> 16 : w & 0xffffu; };
        const float sv = __fmul_rn(post, bf16_bits_to_float((uint16_t) half(yr)));
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < kMaxHc; j++) {
            if (j < p.hc) acc = __fadd_rn(acc, __fmul_rn(m[2 * p.hc + j * p.hc + k], bf16_bits_to_float((uint16_t) half(rr[j]))));
        }
        out[e] = float_to_bf16_bits(__fadd_rn(sv, acc));
    }
    return make_uint2(out[0] | ((uint32_t) out[1] << 16), out[2] | ((uint32_t) out[3] << 16));
}

// CTA (split, token group, row group) sums the products of its slice of the width for the fn rows [r0, r0 + ROWS)
// of TT token rows; the first row group also sums the squares. Every partial is the same sum, in the same order,
// whatever the row groups (a thread's four columns, the warp's xor tree, the warps in order). Below 16 tokens
// groups of six rows spread the 1.5 MB of fn over four times the SMs (one token: 64 CTAs instead of 16, each
// reading 24 KB); from 16 tokens one group takes all rows, and from 64 tokens two tokens per CTA share each fn
// value loaded (more tokens or more groups per CTA measured slower there: every group recomputes the post and
// re-reads the streams, docs/benchmarks.md).
// POST: h is not read but written: its values are the post of the sub-layer before (post), computed here so the
// post needs no kernel and no pass of its own (needs width % 4 == 0 and dim % 4 == 0, and src == nullptr); every
// row group computes them, the first stores them.
template <int ROWS, int TT, bool POST, bool GROUPS>
__global__ void __launch_bounds__(kThreads, TT > 1 ? 2 : 0) k_hc_mix_partials(const uint16_t *h, const int *src, const float *fn,
                                                              int rows, int width, int n, float *partials,
                                                              PostSource post) {
    strata_grid_begin();
    __shared__ float red[TT][kThreads / 32][ROWS + 1];
    // without GROUPS one CTA takes all rows (ROWS bounds them): constants, so the kernel needs no more registers
    const int split = blockIdx.x, splits = gridDim.x, i0 = blockIdx.y * TT, r0 = GROUPS ? blockIdx.z * ROWS : 0;
    const int count = min(TT, n - i0), nr = GROUPS ? min(ROWS, rows - r0) : rows;
    const bool squares = !GROUPS || blockIdx.z == 0;  // uniform over the CTA
    const uint16_t *ht[TT];
#pragma unroll
    for (int t = 0; t < TT; t++) {
        const int i = i0 + (t < count ? t : 0);  // rows past n repeat the first (their sums are not stored)
        ht[t] = h + (int64_t) (src ? src[i] : i) * width;
    }
    const float *f0 = fn + (int64_t) r0 * width;
    const int chunk = ((width + splits - 1) / splits + 3) & ~3;
    const int lo = split * chunk, hi = min(width, lo + chunk);
    float acc[TT][ROWS + 1];
#pragma unroll
    for (int t = 0; t < TT; t++) {
#pragma unroll
        for (int r = 0; r <= ROWS; r++) acc[t][r] = 0.f;
    }
    if (POST || (width & 3) == 0) {  // POST: the host guarantees width % 4 == 0
        for (int c = lo + threadIdx.x * 4; c < hi; c += kThreads * 4) {
            float v[TT][4];
#pragma unroll
            for (int t = 0; t < TT; t++) {
                uint2 raw;
                if constexpr (POST) {
                    raw = post_values(post, i0 + (t < count ? t : 0), c);
                    if (t < count && squares) *reinterpret_cast<uint2 *>(const_cast<uint16_t *>(ht[t]) + c) = raw;
                } else {
                    raw = *reinterpret_cast<const uint2 *>(ht[t] + c);
                }
                v[t][0] = __uint_as_float(raw.x << 16);
                v[t][1] = __uint_as_float(raw.x & 0xffff0000u);
                v[t][2] = __uint_as_float(raw.y << 16);
                v[t][3] = __uint_as_float(raw.y & 0xffff0000u);
            }
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                if (r < nr) {
                    const float4 f = __ldg(reinterpret_cast<const float4 *>(f0 + (int64_t) r * width + c));
#pragma unroll
                    for (int t = 0; t < TT; t++) {
                        acc[t][r] = __fmaf_rn(f.w, v[t][3], __fmaf_rn(f.z, v[t][2], __fmaf_rn(f.y, v[t][1],
                                              __fmaf_rn(f.x, v[t][0], acc[t][r]))));
                    }
                }
            }
            if (squares) {
#pragma unroll
                for (int t = 0; t < TT; t++) {
#pragma unroll
                    for (int j = 0; j < 4; j++) acc[t][ROWS] = __fmaf_rn(v[t][j], v[t][j], acc[t][ROWS]);
                }
            }
        }
    } else {
        for (int c = lo + threadIdx.x; c < hi; c += kThreads) {
#pragma unroll
            for (int t = 0; t < TT; t++) {
                const float v = load_bf16(ht[t] + c);
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    if (r < nr) acc[t][r] = __fmaf_rn(__ldg(f0 + (int64_t) r * width + c), v, acc[t][r]);
                }
                if (squares) acc[t][ROWS] = __fmaf_rn(v, v, acc[t][ROWS]);
            }
        }
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // every row's shuffle tree, unguarded (rows past nr and unsummed squares are zeros, never stored), so the
    // TT * (ROWS + 1) trees interleave: guarded by the runtime row count they ran one after another (the step
    // of 256 tokens 22 us slower, docs/benchmarks.md)
#pragma unroll
    for (int t = 0; t < TT; t++) {
#pragma unroll
        for (int r = 0; r <= ROWS; r++) {
            float v = group_sum<32>(acc[t][r]);
            if (lane == 0) red[t][warp][r] = v;
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < count * (ROWS + 1); k += kThreads) {
        const int t = k / (ROWS + 1), r = k % (ROWS + 1);
        if (r < nr || (r == ROWS && squares)) {
            float s = 0.f;
            for (int w = 0; w < kThreads / 32; w++) s = __fadd_rn(s, red[t][w][r]);
            float *dst = partials + ((int64_t) (i0 + t) * splits + split) * kPartialStride;
            dst[r == ROWS ? kPartialStride - 1 : r0 + r] = s;
        }
    }
}

// Tokens per CTA of the mixes' partials from kMixGroupsMaxTokens tokens: kMixTokens from kMixTokensMin tokens on,
// else 1; STRATA_HC_MIX_TOKENS=1|2|4 forces one (A/B measurements). Read once.
int mix_tokens(int n) {
    static const int forced = [] {
        const char *e = getenv("STRATA_HC_MIX_TOKENS");
        const int v = e != nullptr ? atoi(e) : 0;
        return v == 1 || v == 2 || v == 4 ? v : 0;
    }();
    if (forced != 0) return forced;
    return n >= kMixTokensMin ? kMixTokens : 1;
}

// The mixes' partials of n token rows (with post.y != nullptr: of the post, which they compute and store into h);
// ROWS bounds the rows.
template <int ROWS, bool POST>
void launch_mix_partials(const uint16_t *h, const int *src, const float *fn, int rows, int width, int n,
                         float *partials, PostSource post, cudaStream_t st) {
    constexpr int kGroup = ROWS < kMixRows ? ROWS : kMixRows;
    const int splits = mix_splits(width);
    if (n < kMixGroupsMaxTokens) {
        const dim3 grid(splits, n, (rows + kGroup - 1) / kGroup);
        strata_launch(k_hc_mix_partials<kGroup, 1, POST, true>, grid, kThreads, 0, st, h, src, fn, rows, width, n,
            partials, post);
        return;
    }
    const int tt = mix_tokens(n);
    const dim3 grid(splits, (n + tt - 1) / tt, 1);
    auto *kernel = tt == 4   ? k_hc_mix_partials<ROWS, 4, POST, false>
                   : tt == 2 ? k_hc_mix_partials<ROWS, 2, POST, false>
                             : k_hc_mix_partials<ROWS, 1, POST, false>;
    strata_launch(kernel, grid, kThreads, 0, st, h, src, fn, rows, width, n, partials, post);
}

// Sums the splits' partials in split order (the same order whatever the stream or graph): mixes[r] =
// dot_r * rsqrt(mean(h^2) + eps) for r < rows, for token row i. Needs rows <= 31 threads.
__device__ void mixes_from_partials(const float *partials, int i, int splits, int rows, int width, float eps,
                                    float *mixes) {
    __shared__ float ss;
    // thread r < rows sums dot r, thread 31 the squares; loads first, then the adds in split order
    const int r = threadIdx.x == 31 ? kPartialStride - 1 : threadIdx.x;
    if (threadIdx.x < rows || threadIdx.x == 31) {
        const float *p = partials + (int64_t) i * splits * kPartialStride + r;
        float s = 0.f;
        for (int k0 = 0; k0 < splits; k0 += 16) {  // V4-Flash's 16 splits: one round of loads
            float v[16];
#pragma unroll
            for (int j = 0; j < 16; j++) v[j] = k0 + j < splits ? p[(int64_t) (k0 + j) * kPartialStride] : 0.f;
#pragma unroll
            for (int j = 0; j < 16; j++) {
                if (k0 + j < splits) s = __fadd_rn(s, v[j]);
            }
        }
        if (threadIdx.x == 31) ss = s; else mixes[threadIdx.x] = s;
    }
    __syncthreads();
    if (threadIdx.x < rows) mixes[threadIdx.x] = __fmul_rn(mixes[threadIdx.x], inv_rms(ss, width, eps));
    __syncthreads();
}

// Pre weight i of the mixes m.
__device__ __forceinline__ float pre_weight(const float *m, const float *scale, const float *base, int i, float eps) {
    return __fadd_rn(sigmoid(__fadd_rn(__fmul_rn(m[i], scale[0]), base[i])), eps);
}

// The post weights and the Sinkhorn-normalised combination matrix, computed by one warp: lane j*hc + k owns
// c[j][k]; row and column sums gather the hc values by shuffles and add them in index order from 0, exactly
// the order of the sequential loops of the CPU backend.
__device__ void sinkhorn_split(const float *m, const float *scale, const float *base, int hc, int iters, float eps,
                               float *post, float *comb) {
    const int lane = threadIdx.x & 31, n = hc * hc;
    const int j = lane < n ? lane / hc : 0, k = lane < n ? lane % hc : 0;
    if (lane < hc) post[lane] = __fmul_rn(2.f, sigmoid(__fadd_rn(__fmul_rn(m[hc + lane], scale[1]), base[hc + lane])));
    float c = lane < n ? __fadd_rn(__fmul_rn(m[2 * hc + lane], scale[2]), base[2 * hc + lane]) : 0.f;
    float mx = -INFINITY;
    for (int q = 0; q < hc; q++) mx = fmaxf(mx, __shfl_sync(0xffffffffu, c, j * hc + q));
    c = (float) exp((double) __fsub_rn(c, mx));
    // every shuffle of a sum is issued before its adds (unrolled to kMaxHc; hc is uniform over the warp), so the
    // 20 iterations' chain is the adds and divisions, not one shuffle latency per term; the adds keep their order
    auto row_sum = [&](float v) {
        float t[kMaxHc];
#pragma unroll
        for (int q = 0; q < kMaxHc; q++) t[q] = q < hc ? __shfl_sync(0xffffffffu, v, j * hc + q) : 0.f;
        float s = 0.f;
#pragma unroll
        for (int q = 0; q < kMaxHc; q++) {
            if (q < hc) s = __fadd_rn(s, t[q]);
        }
        return s;
    };
    auto col_sum = [&](float v) {
        float t[kMaxHc];
#pragma unroll
        for (int q = 0; q < kMaxHc; q++) t[q] = q < hc ? __shfl_sync(0xffffffffu, v, q * hc + k) : 0.f;
        float s = 0.f;
#pragma unroll
        for (int q = 0; q < kMaxHc; q++) {
            if (q < hc) s = __fadd_rn(s, t[q]);
        }
        return s;
    };
    c = __fadd_rn(__fdiv_rn(c, row_sum(c)), eps);
    c = __fdiv_rn(c, __fadd_rn(col_sum(c), eps));
    for (int it = 1; it < iters; it++) {
        c = __fdiv_rn(c, __fadd_rn(row_sum(c), eps));
        c = __fdiv_rn(c, __fadd_rn(col_sum(c), eps));
    }
    if (lane < n) comb[lane] = c;
}

// One CTA per token: kNormThreads threads for the pre-mix norm and one more warp for the Sinkhorn iterations,
// side by side once the mixes are known (the norm needs only the pre weights; the iterations are the longer
// chain). G > 0 (dim % 8 == 0, dim <= G * 8 * kNormThreads): each norm thread loads its G 8-channel groups of the
// streams and of the norm weights before the mixes' partials are summed, so those loads wait together with the
// partials' instead of after them, and keeps the pre-mix values in registers; G = 0: premix_norm, through shared
// memory (dim floats), for any dim. Both with premix_norm's arithmetic and order. No launch bounds: with them the
// compiler chose fewer registers and the step measured about a microsecond slower at every batch.
// out_xq (G > 0, dim % 128 == 0), when set, receives out_x FP8-round-tripped per 128 channels (the input of the
// sub-layer's FP8/FP4 linears): a block is 16 consecutive norm threads, half a warp.
// LATER: no Sinkhorn warp; out_mix gets the pre weights and the post and comb mixes as they are, which
// k_hc_sinkhorn turns into the post weights and the combination matrix on another stream: the sub-layer needs only
// x, and the iterations, the longest chain of the kernel, then no longer hold back its first GEMM.
template <int G, bool LATER>
__global__ void k_hc_pre(const uint16_t *h, const float *partials, int splits, const float *base, const float *scale,
                         const float *norm, uint16_t *out_x, uint16_t *out_xq, float *out_mix, int hc, int dim,
                         int iters, float hc_eps, float norm_eps) {
    strata_grid_begin();
    extern __shared__ float xs[];
    __shared__ float red[32];
    __shared__ float mixes[kMaxMix];
    __shared__ float mix[2 * kMaxHc + kMaxHc * kMaxHc];
    const int t = blockIdx.x, width = hc * dim, mw = 2 * hc + hc * hc;
    const uint16_t *ht = h + (int64_t) t * width;
    const bool norm_thread = threadIdx.x < kNormThreads;  // uniform over each warp
    constexpr int kGroups = G > 0 ? G : 1;
    uint4 v[kGroups][kMaxHc];
    float4 nw[kGroups][2];
    auto first = [&](int g) { return (threadIdx.x + g * kNormThreads) * 8; };  // a group's first channel
    if (G > 0 && norm_thread) {
#pragma unroll
        for (int g = 0; g < G; g++) {
            if (first(g) < dim) {
#pragma unroll
                for (int k = 0; k < kMaxHc; k++) {
                    if (k < hc) v[g][k] = *reinterpret_cast<const uint4 *>(ht + (int64_t) k * dim + first(g));
                }
                nw[g][0] = __ldg(reinterpret_cast<const float4 *>(norm + first(g)));
                nw[g][1] = __ldg(reinterpret_cast<const float4 *>(norm + first(g) + 4));
            }
        }
    }
    mixes_from_partials(partials, t, splits, (2 + hc) * hc, width, norm_eps, mixes);
    if (threadIdx.x < hc) mix[threadIdx.x] = pre_weight(mixes, scale, base, threadIdx.x, hc_eps);
    __syncthreads();
    if constexpr (LATER) {
        if (threadIdx.x < mw) out_mix[(int64_t) t * mw + threadIdx.x] = threadIdx.x < hc ? mix[threadIdx.x] : mixes[threadIdx.x];
    } else if (!norm_thread) {
        sinkhorn_split(mixes, scale, base, hc, iters, hc_eps, mix + hc, mix + 2 * hc);
        __syncwarp();
        for (int i = threadIdx.x - kNormThreads; i < mw; i += 32) out_mix[(int64_t) t * mw + i] = mix[i];
        return;
    }
    uint16_t *out = out_x + (int64_t) t * dim;
    if constexpr (G == 0) {
        premix_norm(ht, mix, hc, dim, norm, norm_eps, xs, red, out, kNormThreads);
    } else {
        float s[G][8];
        float ss = 0.f;
#pragma unroll
        for (int g = 0; g < G; g++) {
            if (first(g) < dim) premix8(v[g], mix, hc, s[g], ss);
        }
        const float inv = inv_rms(team_sum(ss, red, kNormThreads), dim, norm_eps);
#pragma unroll
        for (int g = 0; g < G; g++) {
            const bool in = first(g) < dim;  // whole half-warps (dim % 128 == 0 where out_xq is set)
            uint4 o = make_uint4(0, 0, 0, 0);
            if (in) {
                o = norm8(s[g], nw[g][0], nw[g][1], inv);
                *reinterpret_cast<uint4 *>(out + first(g)) = o;
            }
            if (out_xq != nullptr) {  // uniform; every lane of the warp takes part in the shuffles
                float f[8];
                bf16x8_to_float(o, f);
                float amax = 0.f;
#pragma unroll
                for (int i = 0; i < 8; i++) amax = fmaxf(amax, fabsf(f[i]));
                const float sc = fp8_block_scale(group_max<16>(amax));
                uint32_t q[4];
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    q[i] = float_to_bf16_bits(fp8_roundtrip(f[2 * i], sc))
                           | ((uint32_t) float_to_bf16_bits(fp8_roundtrip(f[2 * i + 1], sc)) << 16);
                }
                if (in) *reinterpret_cast<uint4 *>(out_xq + (int64_t) t * dim + first(g)) = make_uint4(q[0], q[1], q[2], q[3]);
            }
        }
    }
}

// The Sinkhorn half of a pre launched with LATER, one warp per token: row t of mix holds the pre weights, then the
// post and comb mixes, which become the post weights and the combination matrix (in place; sinkhorn_split's order).
__global__ void k_hc_sinkhorn(float *mix, const float *base, const float *scale, int hc, int iters, float hc_eps) {
    strata_grid_begin();
    __shared__ float m[kMaxMix];
    const int mw = 2 * hc + hc * hc;
    float *row = mix + (int64_t) blockIdx.x * mw;
    for (int i = threadIdx.x; i < mw; i += 32) m[i] = row[i];
    __syncwarp();
    sinkhorn_split(m, scale, base, hc, iters, hc_eps, row + hc, row + 2 * hc);
}

__global__ void k_hc_post(const uint16_t *y, const uint16_t *res, const float *mix, uint16_t *next, int hc, int dim,
                          int64_t total) {
    strata_grid_begin();
    int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    int64_t t = i / dim;
    int d = (int) (i % dim);
    int mw = 2 * hc + hc * hc;
    const float *m = mix + t * mw;
    const float *post = m + hc;
    const float *comb = m + 2 * hc;
    const uint16_t *r = res + t * hc * dim;
    float out = load_bf16(y + t * dim + d);
    float rv[kMaxHc];
    for (int j = 0; j < hc; j++) rv[j] = load_bf16(r + j * dim + d);
    for (int k = 0; k < hc; k++) {
        float s = __fmul_rn(post[k], out);
        float acc = 0.f;
        for (int j = 0; j < hc; j++) acc = __fadd_rn(acc, __fmul_rn(comb[j * hc + k], rv[j]));
        next[t * hc * dim + k * dim + d] = float_to_bf16_bits(__fadd_rn(s, acc));
    }
}

__global__ void k_hc_head(const uint16_t *h, const int *rows, const float *partials, int splits, const float *base,
                          const float *scale, const float *norm, uint16_t *out_x, int hc, int dim, float hc_eps,
                          float norm_eps) {
    strata_grid_begin();
    extern __shared__ float xs[];
    __shared__ float red[32];
    __shared__ float mixes[kMaxHc];
    __shared__ float pre[kMaxHc];
    int width = hc * dim;
    const uint16_t *ht = h + (int64_t) rows[blockIdx.x] * width;
    mixes_from_partials(partials, blockIdx.x, splits, hc, width, norm_eps, mixes);
    if (threadIdx.x == 0) {
        for (int i = 0; i < hc; i++) pre[i] = pre_weight(mixes, scale, base, i, hc_eps);
    }
    __syncthreads();
    premix_norm(ht, pre, hc, dim, norm, norm_eps, xs, red, out_x + (int64_t) blockIdx.x * dim, blockDim.x);
}

__global__ void k_attn_lists(const int *positions, const int *token_seq, const int *seq_first_token,
                             const int *seq_first_pos, const int *window_floor, const int *swa_table, int swa_stride,
                             int swa_ppp, int swa_span, int swa_pps, const int *comp_table, int comp_stride, int ratio,
                             int topk, int window, int *lists, int *list_len, int64_t list_stride) {
    strata_grid_begin();
    int t = blockIdx.x;
    int s = token_seq[t];
    int p = positions[t];
    int p0 = seq_first_pos[s];
    int floor = window_floor[s];
    int *list = lists + (int64_t) t * list_stride;
    for (int i = threadIdx.x; i < window; i += blockDim.x) {
        int wp = p - window + 1 + i;
        int e = -1;
        if (wp >= floor && wp >= 0) {
            if (wp >= p0) {
                e = (int) ((2u << 30) | (uint32_t) (seq_first_token[s] + wp - p0));
            } else {
                int in_span = wp % swa_span;
                int v = (wp / swa_span) * swa_pps + in_span / swa_ppp;
                int page = window_table_page(swa_table, swa_stride, s, v);
                if (page >= 0) e = page * swa_ppp + in_span % swa_ppp;
            }
        }
        list[i] = e;
    }
    int extra = 0;
    if (ratio == 128) {
        int visible = (p + 1) / ratio;
        int per_page = 256 / ratio;
        for (int j = threadIdx.x; j < visible; j += blockDim.x) {
            int v = j / per_page;
            int page = v < comp_stride ? comp_table[(int64_t) s * comp_stride + v] : -1;
            list[window + j] = page >= 0 ? (int) ((1u << 30) | (uint32_t) (page * per_page + j % per_page)) : -1;
        }
        extra = visible;
    } else if (ratio == 4) {
        extra = topk;
    }
    if (threadIdx.x == 0) list_len[t] = window + extra;
}

__global__ void k_copy_entries(EntryLayout src, int data_bytes, int scale_bytes, const int64_t *slots,
                               EntryLayout dst) {
    strata_grid_begin();
    int t = blockIdx.x;
    int64_t slot = slots[t];
    if (slot < 0) return;
    const uint8_t *sd = src.data(t);
    const uint8_t *ss = src.scales(t);
    uint8_t *d = dst.data(slot);
    uint8_t *sc = dst.scales(slot);
    for (int i = threadIdx.x; i < data_bytes; i += blockDim.x) d[i] = sd[i];
    for (int i = threadIdx.x; i < scale_bytes; i += blockDim.x) sc[i] = ss[i];
}

inline cudaStream_t as_stream(int64_t s) { return reinterpret_cast<cudaStream_t>(s); }

inline int launched() { return (int) cudaGetLastError(); }

}  // namespace

// Benchmark fill: every byte a hash of (seed, index) masked with `mask`, so FP8 values, ue8m0 scales and
// fp32 state words all stay small and finite (mask 0x37: exponents well below overflow, no NaN patterns).
__global__ void k_fill_random(uint8_t *dst, int64_t bytes, uint64_t seed, uint8_t mask) {
    strata_grid_begin();
    for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += (int64_t) gridDim.x * blockDim.x) {
        uint64_t z = seed + (uint64_t) i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        dst[i] = (uint8_t) ((z ^ (z >> 31)) & mask);
    }
}

// Benchmark fill of a kind's ue8m0 scale bytes in the page rows it owns: bytes [offset, offset + bytes) of each
// listed row, every `group` consecutive bytes (one entry's block scales) a base in 120..126 plus 0 or 1, so an
// entry's scales lie within a factor of two, as FP4 blocks of one rotated row come out (the masked random fill
// would spread them over 2^-127 .. 2^-72).
__global__ void k_fill_scales(uint8_t *pool, int64_t row_bytes, const int *rows, int n, int offset, int bytes,
                              int group, uint64_t seed) {
    strata_grid_begin();
    for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t) n * bytes;
         i += (int64_t) gridDim.x * blockDim.x) {
        const int row = rows[i / bytes], b = (int) (i % bytes);
        auto mix = [](uint64_t z) {
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            return z ^ (z >> 31);
        };
        const uint64_t entry = mix(seed + ((uint64_t) row << 20) + (uint64_t) (b / group) * 0x9E3779B97F4A7C15ull);
        const uint64_t own = mix(seed + ((uint64_t) row << 20) + (uint64_t) b * 0xD1B54A32D192ED03ull + 1);
        pool[row * row_bytes + offset + b] = (uint8_t) (120 + entry % 7 + (own & 1));
    }
}

// ---- RoPE rows of a step, gathered from the positions' table

// Token t at position p: q row = table[p]; for ratio r in {4, 128}, the row of the entry's first position p + 1 - r
// when p completes an entry ((p + 1) % r == 0), else zeros (the compressors read no other row). Rows of n2 floats.
__global__ void k_rope_gather(const float *table, const int *positions, int n2, float *q, float *c4, float *c128) {
    strata_grid_begin();
    const int t = blockIdx.x;
    const int p = positions[t];
    const size_t out = (size_t) t * n2;
    const float *row = table + (size_t) p * n2;
    const bool e4 = ((p + 1) & 3) == 0, e128 = ((p + 1) & 127) == 0;
    const float *row4 = table + (size_t) (e4 ? p - 3 : 0) * n2;
    const float *row128 = table + (size_t) (e128 ? p - 127 : 0) * n2;
    for (int i = threadIdx.x; i < n2; i += blockDim.x) {
        q[out + i] = row[i];
        c4[out + i] = e4 ? row4[i] : 0.f;
        c128[out + i] = e128 ? row128[i] : 0.f;
    }
}

// ---- the greedy draw where the logits are

constexpr int kArgmaxThreads = 1024;

// (value, index) pairs: the larger value wins, equal values (-0 and +0 included) the lower index; a NaN never
// wins (it compares neither greater nor equal), so the scan starts from (-inf, none).
struct ArgBest {
    float v;
    int i;
};

__device__ __forceinline__ void arg_take(ArgBest &b, float v, int i) {
    if (v > b.v || (v == b.v && i < b.i)) {
        b.v = v;
        b.i = i;
    }
}

// One CTA per row: the first index of the row's largest value, as StepResult.argmax (a sequential scan with a
// strict >): with row[0] a NaN nothing compares greater, so index 0; else NaNs are skipped.
__global__ void __launch_bounds__(kArgmaxThreads) k_argmax_rows(const float *logits, int vocab, int *out) {
    strata_grid_begin();
    const float *row = logits + (size_t) blockIdx.x * vocab;
    if (isnan(row[0])) {
        if (threadIdx.x == 0) out[blockIdx.x] = 0;
        return;
    }
    ArgBest b{-INFINITY, INT_MAX};
    if ((vocab & 3) == 0) {
        // rows start 16-byte aligned; each thread's indices still rise, so its own ties keep the first
        const float4 *row4 = reinterpret_cast<const float4 *>(row);
        const int n4 = vocab >> 2;
        int c = threadIdx.x;
        for (; c + 3 * kArgmaxThreads < n4; c += 4 * kArgmaxThreads) {
            float4 q[4];
#pragma unroll
            for (int u = 0; u < 4; u++) q[u] = __ldg(row4 + c + u * kArgmaxThreads);
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int i = 4 * (c + u * kArgmaxThreads);
                arg_take(b, q[u].x, i);
                arg_take(b, q[u].y, i + 1);
                arg_take(b, q[u].z, i + 2);
                arg_take(b, q[u].w, i + 3);
            }
        }
        for (; c < n4; c += kArgmaxThreads) {
            const float4 q = __ldg(row4 + c);
            arg_take(b, q.x, 4 * c);
            arg_take(b, q.y, 4 * c + 1);
            arg_take(b, q.z, 4 * c + 2);
            arg_take(b, q.w, 4 * c + 3);
        }
    } else {
        for (int i = threadIdx.x; i < vocab; i += kArgmaxThreads) arg_take(b, __ldg(row + i), i);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float v = __shfl_xor_sync(0xffffffffu, b.v, o);
        const int i = __shfl_xor_sync(0xffffffffu, b.i, o);
        arg_take(b, v, i);
    }
    __shared__ ArgBest warps[kArgmaxThreads / 32];
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = b;
    __syncthreads();
    if (threadIdx.x < 32) {
        b = warps[threadIdx.x];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float v = __shfl_xor_sync(0xffffffffu, b.v, o);
            const int i = __shfl_xor_sync(0xffffffffu, b.i, o);
            arg_take(b, v, i);
        }
        // row[0] is a number, so some value was taken
        if (threadIdx.x == 0) out[blockIdx.x] = b.i;
    }
}

extern "C" {

int strata_embed(int64_t tokens, int64_t embed, int64_t out, int num_tokens, int dim, int hc, int64_t stream) {
    if (num_tokens <= 0) return 0;
    strata_launch(k_embed, num_tokens, kNormThreads, 0, as_stream(stream), (const int *) tokens,
        (const uint16_t *) embed, (uint16_t *) out, dim, hc);
    return launched();
}

int strata_rms_norm(int64_t x, int64_t x_stride, int64_t weight, int64_t out, int64_t out_stride, int64_t out_q,
                    int rows, int n, float eps, int64_t stream) {
    if (rows <= 0) return 0;
    if (out_q != 0 && n % 128 != 0) return (int) cudaErrorInvalidValue;
    const NormRows job{(const uint16_t *) x, x_stride, (const float *) weight, (uint16_t *) out, out_stride, n,
                       (uint16_t *) out_q};
    strata_launch(k_rms_norm, dim3(rows, 1), kThreads, 0, as_stream(stream), job, job, eps);
    return launched();
}

int strata_rms_norm_pair(int64_t x, int64_t x_stride, int64_t weight, int64_t out, int64_t out_stride, int64_t out_q,
                         int n, int64_t x2, int64_t x2_stride, int64_t weight2, int64_t out2, int64_t out2_stride,
                         int n2, int rows, float eps, int64_t stream) {
    if (rows <= 0) return 0;
    if (out_q != 0 && n % 128 != 0) return (int) cudaErrorInvalidValue;
    const NormRows first{(const uint16_t *) x, x_stride, (const float *) weight, (uint16_t *) out, out_stride, n,
                         (uint16_t *) out_q};
    const NormRows second{(const uint16_t *) x2, x2_stride, (const float *) weight2, (uint16_t *) out2, out2_stride, n2,
                          nullptr};
    strata_launch(k_rms_norm, dim3(rows, 2), kThreads, 0, as_stream(stream), first, second, eps);
    return launched();
}

int64_t strata_hc_partials_bytes(int num_tokens, int hc, int dim) {
    return (int64_t) (num_tokens > 0 ? num_tokens : 0) * mix_splits(hc * dim) * kPartialStride * sizeof(float);
}

// The pre of strata_hc_pre and strata_hc_post_pre: the mixes' partials of h (with post.y set: of the post, which
// the partials kernel computes and stores into h), then Sinkhorn and the pre-mix norm per token. out_mix may be
// post.mix: the second kernel rewrites it after the first has read it (stream order).
static int hc_pre(uint16_t *h, const PostSource &post, int64_t fn, int64_t base, int64_t scale, int64_t norm,
                  int64_t out_x, int64_t out_xq, int64_t out_mix, int64_t partials, int num_tokens, int hc, int dim,
                  int iters, float hc_eps, float norm_eps, int sinkhorn_later, int64_t stream) {
    if (out_xq != 0 && dim % 128 != 0) return (int) cudaErrorInvalidValue;
    const int width = hc * dim, splits = mix_splits(width);
    if (post.y != nullptr) {
        launch_mix_partials<kMaxMix, true>(h, nullptr, (const float *) fn, (2 + hc) * hc, width, num_tokens,
                                           (float *) partials, post, as_stream(stream));
    } else {
        launch_mix_partials<kMaxMix, false>(h, nullptr, (const float *) fn, (2 + hc) * hc, width, num_tokens,
                                            (float *) partials, post, as_stream(stream));
    }
    int err = launched();
    if (err != 0) return err;
    const bool regs = dim % 8 == 0 && dim <= 2 * 8 * kNormThreads;
    auto *pre = sinkhorn_later ? (!regs ? k_hc_pre<0, true> : dim <= 8 * kNormThreads ? k_hc_pre<1, true> : k_hc_pre<2, true>)
                               : (!regs ? k_hc_pre<0, false> : dim <= 8 * kNormThreads ? k_hc_pre<1, false> : k_hc_pre<2, false>);
    const size_t smem = regs ? 0 : (size_t) dim * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(pre, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
    // the register form rounds its own output; the shared-memory form leaves that to the round-trip kernel
    strata_launch(pre, num_tokens, kNormThreads + (sinkhorn_later ? 0 : 32), smem, as_stream(stream), h, (const float *) partials, splits,
        (const float *) base, (const float *) scale, (const float *) norm, (uint16_t *) out_x,
        regs ? (uint16_t *) out_xq : nullptr, (float *) out_mix, hc, dim, iters, hc_eps, norm_eps);
    err = launched();
    if (err != 0 || out_xq == 0 || regs) return err;
    return strata_act_fp8_roundtrip(out_x, dim, num_tokens, dim, out_xq, dim, stream);
}

int strata_hc_pre(int64_t h, int64_t fn, int64_t base, int64_t scale, int64_t norm, int64_t out_x, int64_t out_xq,
                  int64_t out_mix, int64_t partials, int num_tokens, int hc, int dim, int iters, float hc_eps,
                  float norm_eps, int sinkhorn_later, int64_t stream) {
    if (hc > kMaxHc) return (int) cudaErrorInvalidValue;
    if (num_tokens <= 0) return 0;
    return hc_pre((uint16_t *) h, PostSource{}, fn, base, scale, norm, out_x, out_xq, out_mix, partials, num_tokens, hc,
                  dim, iters, hc_eps, norm_eps, sinkhorn_later, stream);
}

int strata_hc_sinkhorn(int64_t mix, int64_t base, int64_t scale, int num_tokens, int hc, int iters, float hc_eps,
                       int64_t stream) {
    if (hc > kMaxHc) return (int) cudaErrorInvalidValue;
    if (num_tokens <= 0) return 0;
    strata_launch(k_hc_sinkhorn, num_tokens, 32, 0, as_stream(stream), (float *) mix, (const float *) base,
        (const float *) scale, hc, iters, hc_eps);
    return launched();
}

int strata_hc_post(int64_t y, int64_t res, int64_t mix, int64_t next, int num_tokens, int hc, int dim, int64_t stream) {
    if (hc > kMaxHc) return (int) cudaErrorInvalidValue;
    int64_t total = (int64_t) num_tokens * dim;
    if (total <= 0) return 0;
    strata_launch(k_hc_post, (unsigned) ((total + kThreads - 1) / kThreads), kThreads, 0, as_stream(stream),
        (const uint16_t *) y, (const uint16_t *) res, (const float *) mix, (uint16_t *) next, hc, dim, total);
    return launched();
}

int strata_hc_post_pre(int64_t y, int64_t res, int64_t next, int64_t fn, int64_t base, int64_t scale, int64_t norm,
                       int64_t out_x, int64_t out_xq, int64_t mix, int64_t partials, int num_tokens, int hc, int dim,
                       int iters, float hc_eps, float norm_eps, int sinkhorn_later, int64_t stream) {
    if (hc > kMaxHc) return (int) cudaErrorInvalidValue;
    if (num_tokens <= 0) return 0;
    if (dim % 4 != 0) {  // the fused kernel takes four channels of one stream at a time
        const int err = strata_hc_post(y, res, mix, next, num_tokens, hc, dim, stream);
        return err != 0 ? err : strata_hc_pre(next, fn, base, scale, norm, out_x, out_xq, mix, partials, num_tokens, hc,
                                              dim, iters, hc_eps, norm_eps, sinkhorn_later, stream);
    }
    const PostSource post{(const uint16_t *) y, (const uint16_t *) res, (const float *) mix, hc, dim};
    return hc_pre((uint16_t *) next, post, fn, base, scale, norm, out_x, out_xq, mix, partials, num_tokens, hc, dim,
                  iters, hc_eps, norm_eps, sinkhorn_later, stream);
}

int strata_hc_head(int64_t h, int64_t rows, int64_t fn, int64_t base, int64_t scale, int64_t norm, int64_t out_x,
                   int64_t partials, int num_rows, int hc, int dim, float hc_eps, float norm_eps, int64_t stream) {
    if (hc > kMaxHc) return (int) cudaErrorInvalidValue;
    if (num_rows <= 0) return 0;
    const int width = hc * dim, splits = mix_splits(width);
    launch_mix_partials<kMaxHc, false>((const uint16_t *) h, (const int *) rows, (const float *) fn, hc, width,
                                       num_rows, (float *) partials, PostSource{}, as_stream(stream));
    int err = launched();
    if (err != 0) return err;
    size_t smem = (size_t) dim * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(k_hc_head, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
    strata_launch(k_hc_head, num_rows, kNormThreads, smem, as_stream(stream), (const uint16_t *) h, (const int *) rows,
        (const float *) partials, splits, (const float *) base, (const float *) scale, (const float *) norm,
        (uint16_t *) out_x, hc, dim, hc_eps, norm_eps);
    return launched();
}

int strata_attn_lists(int64_t positions, int64_t token_seq, int64_t seq_first_token, int64_t seq_first_pos,
                      int64_t window_floor, int64_t swa_table, int swa_stride, int swa_positions_per_page,
                      int swa_span, int swa_pages_per_span, int64_t comp_table, int comp_stride, int ratio,
                      int topk, int window, int64_t lists, int64_t list_len, int64_t list_stride, int num_tokens,
                      int64_t stream) {
    if (num_tokens <= 0) return 0;
    strata_launch(k_attn_lists, num_tokens, 128, 0, as_stream(stream), (const int *) positions, (const int *) token_seq,
        (const int *) seq_first_token, (const int *) seq_first_pos, (const int *) window_floor, (const int *) swa_table,
        swa_stride, swa_positions_per_page, swa_span, swa_pages_per_span, (const int *) comp_table, comp_stride, ratio,
        topk, window, (int *) lists, (int *) list_len, list_stride);
    return launched();
}

int strata_copy_entries(int64_t src_pool, int64_t src_page_bytes, int src_entries_per_page, int src_data_stride,
                        int src_scale_base, int src_scale_stride, int data_bytes, int scale_bytes, int64_t slots,
                        int64_t pool, int64_t page_bytes, int entries_per_page, int data_stride, int scale_base,
                        int scale_stride, int num_tokens, int64_t stream) {
    if (num_tokens <= 0) return 0;
    EntryLayout src{(uint8_t *) src_pool, src_page_bytes, src_entries_per_page, src_data_stride, src_scale_base,
                    src_scale_stride};
    EntryLayout dst{(uint8_t *) pool, page_bytes, entries_per_page, data_stride, scale_base, scale_stride};
    strata_launch(k_copy_entries, num_tokens, 64, 0, as_stream(stream), src, data_bytes, scale_bytes,
        (const int64_t *) slots, dst);
    return launched();
}

int strata_rope_gather(int64_t table, int64_t positions, int num_tokens, int row_floats, int64_t out_q, int64_t out_c4,
                       int64_t out_c128, int64_t stream) {
    if (num_tokens <= 0) return 0;
    if (row_floats <= 0) return (int) cudaErrorInvalidValue;
    strata_launch(k_rope_gather, num_tokens, 64, 0, as_stream(stream), (const float *) table, (const int *) positions,
        row_floats, (float *) out_q, (float *) out_c4, (float *) out_c128);
    return launched();
}

int strata_argmax_rows(int64_t logits, int rows, int vocab, int64_t out_tokens, int64_t stream) {
    if (rows <= 0) return 0;
    if (vocab <= 0) return (int) cudaErrorInvalidValue;
    strata_launch(k_argmax_rows, rows, kArgmaxThreads, 0, as_stream(stream), (const float *) logits, vocab,
        (int *) out_tokens);
    return launched();
}

int strata_fill_random(int64_t dst, int64_t bytes, int64_t seed, int mask, int64_t stream) {
    if (bytes <= 0) return 0;
    strata_launch(k_fill_random, 4096, 256, 0, (cudaStream_t) stream, (uint8_t *) dst, bytes, (uint64_t) seed,
        (uint8_t) mask);
    return (int) cudaGetLastError();
}

int strata_fill_scales(int64_t pool, int64_t row_bytes, int64_t rows, int n, int offset, int bytes, int group,
                       int64_t seed, int64_t stream) {
    if (n <= 0 || bytes <= 0) return 0;
    if (group <= 0 || offset < 0) return (int) cudaErrorInvalidValue;
    strata_launch(k_fill_scales, 1024, 256, 0, (cudaStream_t) stream, (uint8_t *) pool, row_bytes, (const int *) rows,
        n, offset, bytes, group, (uint64_t) seed);
    return (int) cudaGetLastError();
}

}  // extern "C"
