// Linear layers over checkpoint-format weights (BF16, F32, FP8 e4m3 with 128x128 ue8m0 scales, FP4 e2m1 with
// ue8m0 per row and 32 inputs), matching io.strata.backend.cpu.ops.{DenseLinear, Fp8Linear, Fp4Linear}:
// FP8/FP4 layers first FP8-round-trip the activation per token and 128 channels (ActivationQuant), the
// products are exact, accumulation is fp32, the output is bf16 (round to nearest even) or fp32.
//
// Two kernels, both dequantizing the weight as they stream it (no up-converted copy is ever stored):
//  * skinny: up to 8 activation rows per CTA, SIMT fp32 FMAs, a few CTAs per SM streaming the weights at
//    memory bandwidth. For decode batches and expert tiles of few rows, and for F32 weights at any batch.
//  * mma: 64x128 output tile per CTA, bf16 WMMA with fp32 accumulators; the weight tile is dequantized to
//    bf16 in shared memory (exact, see gemm.cuh). Weights are read once per 64 activation rows.
#include <cooperative_groups.h>
#include <mma.h>
#include "gemm.cuh"
#include "strata_cuda.h"

namespace strata {
namespace {

namespace cg = cooperative_groups;

// ue8m0 byte -> 2^(e-127), as io.strata.model.format.E8m0.decode (0 -> 2^-127, 255 -> NaN).
__device__ __forceinline__ float e8m0_decode(uint8_t e) {
    if (e == 0) return __uint_as_float(0x00400000u);
    if (e == 255) return __uint_as_float(0x7fc00000u);
    return __uint_as_float(((uint32_t) e) << 23);
}

// e2m1 code (sign in bit 3) -> value. Twice the magnitudes {0,.5,1,1.5,2,3,4,6} are the nibbles of 0xC8643210.
__device__ __forceinline__ float e2m1_decode(uint32_t code) {
    float mag = (float) ((0xC8643210u >> ((code & 7u) * 4u)) & 0xFu) * 0.5f;
    return (code & 8u) ? -mag : mag;
}

__device__ __forceinline__ void bf16x8_to_float(uint4 v, float *f) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = __uint_as_float(w[i] << 16);
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

// Values that are exactly bf16 (every dequantized weight): truncation is exact.
__device__ __forceinline__ uint4 float_to_bf16x8_exact(const float *f) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) w[i] = (__float_as_uint(f[2 * i]) >> 16) | (__float_as_uint(f[2 * i + 1]) & 0xffff0000u);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ size_t row_bytes(int fmt, int cols) {
    switch (fmt) {
        case kBf16: return (size_t) cols * 2;
        case kF32: return (size_t) cols * 4;
        case kFp8: return (size_t) cols;
        default: return (size_t) cols / 2;
    }
}

// Weights n, k..k+7 (k % 8 == 0, so one FP8 128-block and one FP4 32-block) of the matrix at w / s, in fp32.
template <int FMT>
__device__ __forceinline__ void load_w8(const uint8_t *w, const uint8_t *s, int n, int k, int cols, float *f) {
    if constexpr (FMT == kBf16) {
        bf16x8_to_float(__ldg(reinterpret_cast<const uint4 *>(w + ((size_t) n * cols + k) * 2)), f);
    } else if constexpr (FMT == kF32) {
        const float4 *p = reinterpret_cast<const float4 *>(w + ((size_t) n * cols + k) * 4);
        float4 a = __ldg(p), b = __ldg(p + 1);
        f[0] = a.x; f[1] = a.y; f[2] = a.z; f[3] = a.w; f[4] = b.x; f[5] = b.y; f[6] = b.z; f[7] = b.w;
    } else if constexpr (FMT == kFp8) {
        uint2 v = __ldg(reinterpret_cast<const uint2 *>(w + (size_t) n * cols + k));
        float sc = e8m0_decode(__ldg(s + (size_t) (n >> 7) * ((cols + 127) >> 7) + (k >> 7)));
        const uint32_t q[2] = {v.x, v.y};
#pragma unroll
        for (int i = 0; i < 2; i++) {
#pragma unroll
            for (int j = 0; j < 2; j++) {
                __half2_raw h = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t) (q[i] >> (16 * j)), __NV_E4M3);
                float2 p = __half22float2(__half2(h));  // low byte -> .x: the even element
                f[4 * i + 2 * j] = p.x * sc;
                f[4 * i + 2 * j + 1] = p.y * sc;
            }
        }
    } else {
        uint32_t v = __ldg(reinterpret_cast<const uint32_t *>(w + ((size_t) n * cols + k) / 2));
        float sc = e8m0_decode(__ldg(s + (size_t) n * (cols / 32) + (k >> 5)));
#pragma unroll
        for (int i = 0; i < 8; i++) f[i] = e2m1_decode(v >> (4 * i)) * sc;  // low nibble = even element
    }
}

// Where one CTA works: its activation rows [r0, r1) and its weight block.
struct Tile {
    int r0, r1;
    const uint8_t *w, *s;
    int xcol, ycol;
};

__device__ __forceinline__ Tile resolve_tile(const GemmArgs &a, int tile, int tile_rows) {
    Tile t;
    if (a.offsets == nullptr) {
        int g = blockIdx.z;
        t.r0 = tile * tile_rows;
        t.r1 = min(a.m, t.r0 + tile_rows);
        t.w = a.w + (size_t) g * a.rows * row_bytes(a.fmt, a.cols);
        size_t srow = a.fmt == kFp8 ? (size_t) (g * a.rows / 128) * ((a.cols + 127) / 128)
                                    : (size_t) g * a.rows * (a.cols / 32);
        t.s = a.scale == nullptr ? nullptr : a.scale + srow;
        t.xcol = g * a.cols;
        t.ycol = g * a.rows;
        return t;
    }
    t.r0 = t.r1 = 0;
    t.w = t.s = nullptr;
    t.xcol = t.ycol = 0;
    if (tile >= __ldg(a.tile_offsets + a.experts)) return t;
    int lo = 0, hi = a.experts - 1;  // the last expert e with tile_offsets[e] <= tile
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (__ldg(a.tile_offsets + mid) <= tile) lo = mid; else hi = mid - 1;
    }
    int e = lo;
    t.r0 = __ldg(a.offsets + e) + (tile - __ldg(a.tile_offsets + e)) * tile_rows;
    t.r1 = min(__ldg(a.offsets + e + 1), t.r0 + tile_rows);
    t.w = a.w + (size_t) e * a.w_stride;
    t.s = a.scale == nullptr ? nullptr : a.scale + (size_t) e * a.s_stride;
    return t;
}

__device__ __forceinline__ int x_row(const GemmArgs &a, int r) { return a.gather ? __ldg(a.gather + r) : r; }

__device__ __forceinline__ void store_y(const GemmArgs &a, int r, int col, float v) {
    size_t i = (size_t) r * a.ldy + col;
    if (a.bf16_out) reinterpret_cast<__nv_bfloat16 *>(a.y)[i] = __float2bfloat16_rn(v);
    else reinterpret_cast<float *>(a.y)[i] = v;
}

// ---- skinny kernel: decode-sized row tiles at memory bandwidth ------------------------------------------
// Every lane streams 16-byte chunks of weight rows (16 FP8, 32 FP4, 8 BF16 or 4 F32 values) and keeps many
// of them in flight: a CTA's 8 warps split the K range (kw warps per feature group, the rest take more
// features), so even a 512-row matrix fills the GPU. The block scales are applied to each chunk's partial
// dot product instead of to every weight: a power of two commutes with the fp32 rounding, so the products
// and their sum are those of the dequantized weights, in another summation order. FP4 codes are decoded
// by placing their bits in an fp16 (the value times 2^-14; the factor goes back with the scale), FP8 by the
// hardware's e4m3 -> fp16 conversion; both exact.
template <int FMT> struct Skinny;
template <> struct Skinny<kFp8> { static constexpr int kElems = 16, kFeatures = 4; };
template <> struct Skinny<kFp4> { static constexpr int kElems = 32, kFeatures = 2; };
template <> struct Skinny<kBf16> { static constexpr int kElems = 8, kFeatures = 4; };
template <> struct Skinny<kF32> { static constexpr int kElems = 4, kFeatures = 4; };

__device__ __forceinline__ void fp8x4_to_float(uint32_t q, float *f) {
#pragma unroll
    for (int j = 0; j < 2; j++) {
        __half2_raw h = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t) (q >> (16 * j)), __NV_E4M3);
        float2 p = __half22float2(__half2(h));
        f[2 * j] = p.x;
        f[2 * j + 1] = p.y;
    }
}

// Eight e2m1 codes (low nibble first) -> their values times 2^-14, in element order.
__device__ __forceinline__ void fp4x8_to_float(uint32_t v, float *f) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
        // nibble j in bits 0..3 and nibble j + 4 in bits 16..19 of t: magnitude bits to fp16 bits 9..11,
        // sign to bit 15, of each half
        uint32_t t = v >> (4 * j);
        __half2_raw h;
        uint32_t bits = ((t & 0x00070007u) << 9) | ((t & 0x00080008u) << 12);
        h.x = (unsigned short) (bits & 0xffffu);
        h.y = (unsigned short) (bits >> 16);
        float2 p = __half22float2(__half2(h));
        f[j] = p.x;
        f[j + 4] = p.y;
    }
}

// The chunk's E weights of one row as floats (FP4: times 2^-14).
template <int FMT>
__device__ __forceinline__ void decode_chunk(uint4 w, float *f) {
    const uint32_t q[4] = {w.x, w.y, w.z, w.w};
    if constexpr (FMT == kFp8) {
#pragma unroll
        for (int i = 0; i < 4; i++) fp8x4_to_float(q[i], f + 4 * i);
    } else if constexpr (FMT == kFp4) {
#pragma unroll
        for (int i = 0; i < 4; i++) fp4x8_to_float(q[i], f + 8 * i);
    } else if constexpr (FMT == kBf16) {
        bf16x8_to_float(w, f);
    } else {
        f[0] = __uint_as_float(w.x); f[1] = __uint_as_float(w.y); f[2] = __uint_as_float(w.z); f[3] = __uint_as_float(w.w);
    }
}

// Sums P values over the warp's 32 lanes with P - 1 + log2(32 / P) shuffles: each exchange halves the values
// a lane carries. Afterwards every lane holds the total of value index lane / (32 / P).
template <int P>
__device__ __forceinline__ float warp_sum_many(float (&v)[P], int lane) {
#pragma unroll
    for (int half = P / 2, o = 16; half >= 1; half >>= 1, o >>= 1) {
        const bool upper = (lane & o) != 0;
#pragma unroll
        for (int i = 0; i < half; i++) {
            float send = upper ? v[i] : v[i + half];
            float keep = upper ? v[i + half] : v[i];
            v[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
    }
    float r = v[0];
#pragma unroll
    for (int o = 16 / P; o >= 1; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
    return r;
}

// One CTA streams feature blocks blockIdx.y, + gridDim.y, ... of its row tile, the next step's weights
// always in flight while the current ones are multiplied (a grid of a few CTAs per SM: launching a CTA per
// 8 KB of weights costs more than reading them).
template <int FMT>
__device__ __forceinline__ void load_chunk(const GemmArgs &a, const Tile &t, int n, int k, int sblocks, uint4 &w,
                                           float &sc) {
    w = make_uint4(0, 0, 0, 0);
    sc = 0.f;
    if (n >= a.rows || k >= a.cols) return;
    if constexpr (FMT == kFp8) {
        w = __ldg(reinterpret_cast<const uint4 *>(t.w + (size_t) n * a.cols + k));
        sc = e8m0_decode(__ldg(t.s + (size_t) (n >> 7) * sblocks + (k >> 7)));
    } else if constexpr (FMT == kFp4) {
        w = __ldg(reinterpret_cast<const uint4 *>(t.w + ((size_t) n * a.cols + k) / 2));
        sc = e8m0_decode(__ldg(t.s + (size_t) n * (a.cols / 32) + (k >> 5)));
    } else {
        w = __ldg(reinterpret_cast<const uint4 *>(t.w + ((size_t) n * a.cols + k) * (FMT == kBf16 ? 2 : 4)));
    }
}

template <int FMT, int MT>
__global__ void __launch_bounds__(256) k_skinny(GemmArgs a, int kw) {
    constexpr int E = Skinny<FMT>::kElems, NF = Skinny<FMT>::kFeatures, P = NF * MT;
    __shared__ float red[8][P];
    const Tile t = resolve_tile(a, blockIdx.x, a.offsets ? a.tile_rows : MT);
    const int groups = 8 / kw, features = NF * groups;
    const int nfb = (a.rows + features - 1) / features;
    if (t.r0 >= t.r1 || (int) blockIdx.y >= nfb) return;  // uniform over the CTA: before any barrier
    const int nrows = t.r1 - t.r0;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / kw, kwi = warp % kw;
    const __nv_bfloat16 *xr[MT];
#pragma unroll
    for (int r = 0; r < MT; r++) xr[r] = a.x + (size_t) x_row(a, t.r0 + (r < nrows ? r : 0)) * a.lda + t.xcol;
    const int sblocks = (a.cols + 127) >> 7;
    const int kstep = kw * 32 * E, kbase = (kwi * 32 + lane) * E;
    const int kiters = (a.cols + kstep - 1) / kstep;
    float acc[NF][MT];
#pragma unroll
    for (int f = 0; f < NF; f++)
#pragma unroll
        for (int r = 0; r < MT; r++) acc[f][r] = 0.f;

    int fb = blockIdx.y, ki = 0;
    uint4 wc[NF];
    float sc[NF];
#pragma unroll
    for (int f = 0; f < NF; f++) load_chunk<FMT>(a, t, (fb * groups + g) * NF + f, kbase, sblocks, wc[f], sc[f]);
    while (true) {
        int nfb_next = fb, ki_next = ki + 1;
        if (ki_next == kiters) {
            ki_next = 0;
            nfb_next = fb + gridDim.y;
        }
        const bool more = nfb_next < nfb;
        uint4 wn[NF];
        float sn[NF];
        if (more) {
#pragma unroll
            for (int f = 0; f < NF; f++) {
                load_chunk<FMT>(a, t, (nfb_next * groups + g) * NF + f, kbase + ki_next * kstep, sblocks, wn[f], sn[f]);
            }
        }
        const int k = kbase + ki * kstep;
        if (k < a.cols) {
            float wf[NF][E];
#pragma unroll
            for (int f = 0; f < NF; f++) decode_chunk<FMT>(wc[f], wf[f]);
#pragma unroll
            for (int r = 0; r < MT; r++) {
                if (r < nrows) {
                    float xv[E];
#pragma unroll
                    for (int i = 0; i < E / 8; i++) bf16x8_to_float(__ldg(reinterpret_cast<const uint4 *>(xr[r] + k) + i), xv + 8 * i);
                    if constexpr (E == 4) {
                        const uint2 raw = __ldg(reinterpret_cast<const uint2 *>(xr[r] + k));
                        xv[0] = __uint_as_float(raw.x << 16); xv[1] = __uint_as_float(raw.x & 0xffff0000u);
                        xv[2] = __uint_as_float(raw.y << 16); xv[3] = __uint_as_float(raw.y & 0xffff0000u);
                    }
#pragma unroll
                    for (int f = 0; f < NF; f++) {
                        float p = 0.f;
#pragma unroll
                        for (int e = 0; e < E; e++) p = fmaf(wf[f][e], xv[e], p);
                        if constexpr (FMT == kFp8) acc[f][r] = fmaf(p, sc[f], acc[f][r]);
                        else if constexpr (FMT == kFp4) acc[f][r] = fmaf(p * 16384.f, sc[f], acc[f][r]);
                        else acc[f][r] += p;
                    }
                }
            }
        }
        if (ki_next == 0) {  // feature block fb is complete: sum it over the CTA and store it
            float v[P];
#pragma unroll
            for (int f = 0; f < NF; f++)
#pragma unroll
                for (int r = 0; r < MT; r++) {
                    v[f * MT + r] = acc[f][r];
                    acc[f][r] = 0.f;
                }
            const float total = warp_sum_many<P>(v, lane);
            __syncthreads();  // the previous block's sums have been read
            if ((lane & (32 / P - 1)) == 0) red[warp][lane / (32 / P)] = total;
            __syncthreads();
            if (threadIdx.x < groups * P) {
                const int gg = threadIdx.x / P, i = threadIdx.x % P, f = i / MT, r = i % MT;
                const int n = (fb * groups + gg) * NF + f;
                if (n < a.rows && r < nrows) {
                    float sum = 0.f;
                    for (int q = 0; q < kw; q++) sum += red[gg * kw + q][i];
                    store_y(a, t.r0 + r, t.ycol + n, sum);
                }
            }
        }
        if (!more) break;
        fb = nfb_next;
        ki = ki_next;
#pragma unroll
        for (int f = 0; f < NF; f++) {
            wc[f] = wn[f];
            sc[f] = sn[f];
        }
    }
}

// ---- tensor-core kernel: 64 x 128 tile, 8 warps of 32 x 32, K step 64 -----------------------------------
constexpr int kBM = kMmaRows, kBN = 128, kBK = 64, kLds = kBK + 8;  // +8: rows land on different banks
constexpr int kEpiLd = 36;                                           // fp32 staging row of a warp's 32 x 32
constexpr int kTileBytes = (kBM + kBN) * kLds * 2;
constexpr int kEpiBytes = 8 * 32 * kEpiLd * 4;
constexpr int kMmaSmem = kTileBytes > kEpiBytes ? kTileBytes : kEpiBytes;

// K is split over the `splits` CTAs of a thread-block cluster (blockIdx.x = feature block * splits + rank)
// when the feature blocks alone would leave SMs idle (decode batches: a 64-row tile of a 1024-row matrix is
// 8 CTAs). Each CTA stages its fp32 partial tile in shared memory; after a cluster barrier every CTA sums
// a share of the tile over the cluster's CTAs in rank order through distributed shared memory, so the
// result does not depend on scheduling and no global scratch is needed.
template <int FMT>
__global__ void __launch_bounds__(256) k_mma(GemmArgs a, int splits) {
    using namespace nvcuda;
    __shared__ __align__(128) unsigned char smem[kMmaSmem];
    const Tile t = resolve_tile(a, blockIdx.y, kBM);
    if (t.r0 >= t.r1) return;  // uniform over the cluster (one tile): before any barrier
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int rank = blockIdx.x % splits;
    const int n0 = (blockIdx.x / splits) * kBN;
    const int kchunk = ((a.cols + splits * kBK - 1) / (splits * kBK)) * kBK;
    const int k_lo = rank * kchunk, k_hi = min(a.cols, k_lo + kchunk);
    __nv_bfloat16 *As = reinterpret_cast<__nv_bfloat16 *>(smem);
    __nv_bfloat16 *Bs = As + kBM * kLds;

    // Each thread moves 2 A vectors and 4 B vectors of 8 elements per K step (8 threads per 64-wide row).
    const __nv_bfloat16 *arow[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        int r = t.r0 + ((tid + i * 256) >> 3);
        arow[i] = r < t.r1 ? a.x + (size_t) x_row(a, r) * a.lda + t.xcol : nullptr;
    }
    const int kv = (tid & 7) * 8;
    uint4 areg[2], breg[4];
    auto fetch = [&](int k0) {
        int k = k0 + kv;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            areg[i] = arow[i] != nullptr && k < a.cols ? __ldg(reinterpret_cast<const uint4 *>(arow[i] + k))
                                                       : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int n = n0 + ((tid + i * 256) >> 3);
            if (n < a.rows && k < a.cols) {
                if constexpr (FMT == kBf16) {
                    breg[i] = __ldg(reinterpret_cast<const uint4 *>(t.w + ((size_t) n * a.cols + k) * 2));
                } else {
                    float f[8];
                    load_w8<FMT>(t.w, t.s, n, k, a.cols, f);
                    breg[i] = float_to_bf16x8_exact(f);
                }
            } else {
                breg[i] = make_uint4(0, 0, 0, 0);
            }
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
    const int wm = (warp >> 2) * 32, wn = (warp & 3) * 32;

    if (k_lo < k_hi) fetch(k_lo);
    for (int k0 = k_lo; k0 < k_hi; k0 += kBK) {
        __syncthreads();  // the previous step's MMAs are done with the tiles
#pragma unroll
        for (int i = 0; i < 2; i++) *reinterpret_cast<uint4 *>(As + ((tid + i * 256) >> 3) * kLds + kv) = areg[i];
#pragma unroll
        for (int i = 0; i < 4; i++) *reinterpret_cast<uint4 *>(Bs + ((tid + i * 256) >> 3) * kLds + kv) = breg[i];
        __syncthreads();
        if (k0 + kBK < k_hi) fetch(k0 + kBK);  // next step's loads fly during this step's MMAs
#pragma unroll
        for (int kk = 0; kk < kBK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bf[2];
#pragma unroll
            for (int i = 0; i < 2; i++) wmma::load_matrix_sync(af[i], As + (wm + i * 16) * kLds + kk, kLds);
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::load_matrix_sync(bf[j], Bs + (wn + j * 16) * kLds + kk, kLds);
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
    }
    __syncthreads();  // the staging area overlaps the tiles
    float *C = reinterpret_cast<float *>(smem) + warp * 32 * kEpiLd;
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(C + i * 16 * kEpiLd + j * 16, acc[i][j], kEpiLd, wmma::mem_row_major);
    if (splits == 1) {
        __syncwarp();
        const int n = n0 + wn + lane;
        if (n >= a.rows) return;
        for (int r = 0; r < 32; r++) {
            int row = t.r0 + wm + r;
            if (row >= t.r1) break;
            store_y(a, row, t.ycol + n, C[r * kEpiLd + lane]);
        }
        return;
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every CTA's partial tile is staged
    // this CTA sums warps' sub-tiles w = rank, rank + splits, ... (splits divides 8)
    for (int w = rank; w < 8; w += splits) {
        const int wm2 = (w >> 2) * 32, wn2 = (w & 3) * 32;
        const int n = n0 + wn2 + lane;
        for (int r = warp; r < 32; r += 8) {
            const int row = t.r0 + wm2 + r;
            if (row >= t.r1 || n >= a.rows) continue;
            const int off = w * 32 * kEpiLd + r * kEpiLd + lane;
            float sum = 0.f;
            for (int q = 0; q < splits; q++) {
                const float *remote = cluster.map_shared_rank(reinterpret_cast<float *>(smem), q);
                sum += remote[off];
            }
            store_y(a, row, t.ycol + n, sum);
        }
    }
    cluster.sync();  // no CTA leaves while another still reads its shared memory
}

// ---- activation FP8 round trip (ActivationQuant.fp8RoundTrip, block 128): one warp per block ------------
__global__ void k_act_fp8_roundtrip(const __nv_bfloat16 *x, int lda, int m, int cols, __nv_bfloat16 *out, int ldo) {
    const int blocks = cols / 128;
    const int gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (gw >= m * blocks) return;
    const int r = gw / blocks, c = (gw % blocks) * 128 + lane * 4;
    const uint2 raw = *reinterpret_cast<const uint2 *>(x + (size_t) r * lda + c);
    float v[4] = {__uint_as_float(raw.x << 16), __uint_as_float(raw.x & 0xffff0000u),
                  __uint_as_float(raw.y << 16), __uint_as_float(raw.y & 0xffff0000u)};
    float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    const float s = fp8_block_scale(group_max<32>(amax));
    uint16_t q[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t) fp8_encode(v[i], s), __NV_E4M3);
        q[i] = float_to_bf16_bits(__half2float(__half(h)) * s);  // exact: an e4m3 value times a power of two
    }
    *reinterpret_cast<uint2 *>(out + (size_t) r * ldo + c) =
        make_uint2(q[0] | ((uint32_t) q[1] << 16), q[2] | ((uint32_t) q[3] << 16));
}

template <int FMT>
cudaError_t launch_mma(const GemmArgs &a, cudaStream_t st) {
    const int nblocks = (a.rows + kBN - 1) / kBN;
    const int tiles = a.offsets ? a.max_tiles : (a.m + kBM - 1) / kBM;
    // split K over a cluster of up to 8 CTAs until about two CTAs per SM run, each keeping >= 4 K steps
    int splits = 1;
    const int base = nblocks * tiles * (a.offsets ? 1 : a.groups);
    while (splits < 8 && base * splits < 2 * strata_sm_count() && a.cols >= splits * 2 * 4 * kBK) splits *= 2;
    return strata_launch_cluster(k_mma<FMT>, dim3(nblocks * splits, tiles, a.offsets ? 1 : a.groups), dim3(256), 0, st,
                                 splits, a, splits);
}

template <int FMT, int MT>
cudaError_t launch_skinny(const GemmArgs &a, cudaStream_t st) {
    constexpr int E = Skinny<FMT>::kElems, NF = Skinny<FMT>::kFeatures;
    int kw = 8;  // warps along K: no more than the K range has 32-lane chunks for
    while (kw > 1 && a.cols <= (kw / 2) * 32 * E) kw >>= 1;
    const int features = NF * (8 / kw);
    const int nfb = (a.rows + features - 1) / features;
    const int tiles = a.offsets ? a.max_tiles : ((a.m + MT - 1) / MT) * a.groups;
    // one wave of resident CTAs over all tiles (for experts, max_tiles bounds the tiles that have rows)
    const int sms = strata_sm_count();
    // resident CTAs per SM: a property of the compiled kernel, asked once (eager steps launch dozens of these)
    static const int occupancy = [] {
        int n = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_skinny<FMT, MT>, 256, 0) == cudaSuccess && n > 0 ? n : 1;
    }();
    // at most one wave: a CTA streams for long, and a second, partial wave would run alone at the end
    int per_tile = occupancy * sms / tiles;
    per_tile = per_tile < 1 ? 1 : (per_tile > nfb ? nfb : per_tile);
    dim3 grid(a.offsets ? a.max_tiles : (a.m + MT - 1) / MT, per_tile, a.offsets ? 1 : a.groups);
    k_skinny<FMT, MT><<<grid, 256, 0, st>>>(a, kw);
    return cudaGetLastError();
}

template <int FMT>
cudaError_t launch_skinny_rows(const GemmArgs &a, cudaStream_t st) {
    const int rows = a.offsets ? a.tile_rows : a.m;
    if (rows <= 1) return launch_skinny<FMT, 1>(a, st);
    if (rows <= 2) return launch_skinny<FMT, 2>(a, st);
    if (rows <= 4) return launch_skinny<FMT, 4>(a, st);
    return launch_skinny<FMT, kGemvRows>(a, st);
}

}  // namespace

cudaError_t launch_gemm(const GemmArgs &a, cudaStream_t st) {
    // the skinny kernel's 16-byte chunks (the formats' blocks are multiples of them)
    if ((a.fmt == kFp8 && a.cols % 16 != 0) || (a.fmt == kFp4 && a.cols % 32 != 0)) return cudaErrorInvalidValue;
    bool small = a.fmt == kF32 || (a.offsets ? a.tile_rows <= kGemvRows : a.m <= kSkinnyRowsMax);
    if (a.fmt == kF32) return launch_skinny_rows<kF32>(a, st);
    switch (a.fmt) {
        case kBf16: return small ? launch_skinny_rows<kBf16>(a, st) : launch_mma<kBf16>(a, st);
        case kFp8: return small ? launch_skinny_rows<kFp8>(a, st) : launch_mma<kFp8>(a, st);
        case kFp4: return small ? launch_skinny_rows<kFp4>(a, st) : launch_mma<kFp4>(a, st);
        default: return cudaErrorInvalidValue;
    }
}

}  // namespace strata

using namespace strata;

int strata_act_fp8_roundtrip(int64_t x, int lda, int m, int cols, int64_t out, int ldo, int64_t stream) {
    if (m <= 0) return 0;
    if (cols % 128 != 0 || lda % 4 != 0 || ldo % 4 != 0) return (int) cudaErrorInvalidValue;
    int64_t warps = (int64_t) m * (cols / 128);
    k_act_fp8_roundtrip<<<(unsigned) ((warps + 7) / 8), 256, 0, (cudaStream_t) stream>>>(
        reinterpret_cast<const __nv_bfloat16 *>(x), lda, m, cols, reinterpret_cast<__nv_bfloat16 *>(out), ldo);
    STRATA_LAUNCH_CHECK();
    return 0;
}

int strata_linear(int fmt, int64_t w, int64_t scale, int rows, int cols, int groups, int64_t x, int lda, int m,
                  int64_t y, int ldy, int bf16_out, int quantize_input, int64_t workspace, int64_t stream) {
    if (m <= 0 || rows <= 0) return 0;
    if (cols % 8 != 0 || lda % 8 != 0 || (x & 15) != 0 || groups < 1) return (int) cudaErrorInvalidValue;
    cudaStream_t st = (cudaStream_t) stream;
    if (quantize_input) {
        if (groups != 1) return (int) cudaErrorInvalidValue;
        int err = strata_act_fp8_roundtrip(x, lda, m, cols, workspace, cols, stream);
        if (err != 0) return err;
        x = workspace;
        lda = cols;
    }
    GemmArgs a{};
    a.fmt = fmt;
    a.w = reinterpret_cast<const uint8_t *>(w);
    a.scale = reinterpret_cast<const uint8_t *>(scale);
    a.rows = rows;
    a.cols = cols;
    a.groups = groups;
    a.x = reinterpret_cast<const __nv_bfloat16 *>(x);
    a.lda = lda;
    a.y = reinterpret_cast<void *>(y);
    a.ldy = ldy;
    a.bf16_out = bf16_out;
    a.m = m;
    return (int) launch_gemm(a, st);
}
