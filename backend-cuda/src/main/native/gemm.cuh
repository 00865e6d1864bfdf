// The GEMM behind every linear layer and the MoE's grouped expert GEMMs (internal to linear.cu and moe.cu).
//
// y[r, n] = sum_k x[r, k] * W[n, k] in fp32, W dequantized from its checkpoint format on the fly. Every
// dequantized weight (e4m3 * 2^k, e2m1 * 2^k, bf16) and every activation (bf16, or FP8-round-tripped bf16)
// is exactly a bf16 number, so the bf16 tensor-core path multiplies exactly the values the CPU backend
// multiplies and only the fp32 summation order differs. F32 weights are not bf16: they take the SIMT path.
#pragma once
#include "numerics.cuh"

namespace strata {

// Weight formats; the values are the ordinals of the Java enum io.strata.backend.cuda.model.WeightFormat.
enum WeightFmt : int { kBf16 = 0, kF32 = 1, kFp8 = 2, kFp4 = 3 };

constexpr int kGemvRows = 8;   // most activation rows per CTA of the SIMT kernel (decode-sized batches)
constexpr int kMmaRows = 64;   // activation rows per CTA of the tensor-core kernel
constexpr int kSkinnyRowsMax = 16;  // plain GEMMs of at most this many rows take the SIMT kernel
constexpr int kMmaBf16MinFeatures = 16384;  // bf16 matrices this wide take tensor cores from kGemvRows rows

// One GEMM launch. Two ways for CTAs to find their activation rows:
//  * plain (offsets == null): rows [0, m), and `groups` independent weight blocks along blockIdx.z (wo_a:
//    group g reads x columns [g*cols, (g+1)*cols), weight rows [g*rows, (g+1)*rows) and writes y columns
//    [g*rows, (g+1)*rows));
//  * experts (offsets != null): slots [offsets[e], offsets[e+1]) belong to expert e, whose weight starts at
//    w + e*w_stride (scales at scale + e*s_stride); tile_offsets[e] numbers its tiles of tile_rows slots, and
//    blockIdx.y is a global tile index (CTAs past the last tile exit). Slot s reads x row gather[s] (or s
//    when gather is null) and writes y row s. Nothing about the routing is known on the host. A paired launch
//    (mats == 2) also multiplies the same slots by a second matrix of the same shape and format (w3 beside
//    w1): w_pair / scale_pair, written y_pair elements after y; group index 1 names it wherever plain GEMMs
//    take their weight group. One launch instead of two shares the activations and the last wave's tail.
struct GemmArgs {
    int fmt;
    bool ordinary_scales;       // FP4: every scale byte is in 1..254 (kStrataScalesOrdinary in the fmt code)
    const uint8_t *w;
    const uint8_t *scale;
    int64_t w_stride, s_stride;
    int rows, cols;             // out and in features of one group / expert
    int groups;
    const __nv_bfloat16 *x;
    int lda;
    void *y;
    int ldy;
    int bf16_out;
    int m;
    const int *offsets;
    const int *tile_offsets;
    const int *gather;
    int experts;
    int max_tiles;
    int tile_rows;              // 1, 2, 4, kGemvRows (SIMT kernels) or kMmaRows (tensor cores): experts mode
    int mats = 1;               // experts mode: 2 with the paired matrix below
    const uint8_t *w_pair;
    const uint8_t *scale_pair;
    int64_t y_pair;             // elements from y to the paired matrix's output (same ldy)
};

// The fmt code of strata_linear.h: the format in the low byte, flags above it.
constexpr int kFmtScalesOrdinary = 0x100;
inline bool parse_fmt(int code, GemmArgs &a) {
    a.fmt = code & 0xff;
    a.ordinary_scales = (code & kFmtScalesOrdinary) != 0 && a.fmt == kFp4;
    return (code & ~(0xff | kFmtScalesOrdinary)) == 0 && a.fmt >= kBf16 && a.fmt <= kFp4;
}

// Which kernel takes FP8/FP4 decode GEMMs (at most kGemvRows rows per tile): the environment variable
// STRATA_DECODE_GEMM=simt or =tensor forces one (A/B measurements); otherwise (auto) the tensor-core decode
// kernel where it measured faster. Read once.
enum class DecodeGemm { kSimt, kAuto, kTensor };
constexpr int kDecodeTensorMinRows = 4;  // auto, plain GEMMs: fewer rows stay on the SIMT kernel (routed
                                         // experts take tiles of 8 slots on the tensor-core kernel from one token)
DecodeGemm decode_gemm_mode();

// Launches the GEMM: the tensor-core decode kernel for FP8/FP4 weights and at most kGemvRows plain rows or
// expert tiles of kGemvRows; SIMT for F32 weights and other decode-sized shapes (at most kSkinnyRowsMax plain
// rows or tile_rows <= kGemvRows); the 64-row tensor-core kernel otherwise. Requires cols % 8 == 0 (FP8: 16,
// FP4: 32), lda % 8 == 0 and a 16-byte aligned x.
cudaError_t launch_gemm(const GemmArgs &a, cudaStream_t stream);

}  // namespace strata
