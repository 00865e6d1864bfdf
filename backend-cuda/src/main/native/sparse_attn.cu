// Sparse attention with a per-head sink over paged FP8 KV entries (decode and prefill rows alike).
//
// Per query row (a token) and head h, over the row's index list J (tagged slots, -1 = skip):
//   z_j = (q_h . kv_j) * scale,  o_h = sum_j bf16(exp(z_j - m)) kv_j / (sum_j exp(z_j - m) + exp(sink_h - m))
// K = V = the 512-wide entry: 448 e4m3 channels times their per-64 ue8m0 scale, then 64 bf16 RoPE
// channels. Dequantisation is exact in bf16 (3 mantissa bits times a power of two), so the tensor-core
// products see the same K as the CPU backend; logits and sums are fp32, P enters the PV product as bf16,
// the output is bf16 (the softmax is online over tiles of 64 entries, so the bf16 rounding of P happens
// against a running maximum instead of the final one: results agree with the CPU backend to ~1e-3).
//
// One CTA = one query row x 64 heads (more heads: more CTAs in y); 8 warps: warp w owns heads
// 16*(w%4)..+16 and output channels 256*(w/4)..+256. Per tile of 64 entries:
//   cp.async the raw 584-byte entries (next tile in flight during this tile's math)
//   -> dequantise to a bf16 tile in shared memory
//   -> S = Q K^T (each warp half of the channels; the two halves are summed through shared memory)
//   -> online softmax -> O += P K (each warp its 256 channels)
// An index list entry is a tagged slot: bits 30..31 the source (0..2), bits 0..29 the slot in it.
#include <cuda_runtime.h>
#include "async_copy.cuh"
#include "numerics.cuh"
#include "strata_cuda.h"

using namespace strata;

namespace {

constexpr int kD = 512, kNope = 448;
constexpr int kHeadsPerCta = 64;
constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kRawRow = 592;                // 576 data + 8 scales, 16-byte aligned
constexpr int kMaxSources = 3;

constexpr size_t kQBytes = (size_t) kHeadsPerCta * kD * 2;
constexpr size_t kKBytes = (size_t) kTile * kD * 2;
constexpr size_t kRawBytes = (size_t) kTile * kRawRow;   // one tile's raw entries; two in flight
constexpr int kRing = 4;                                    // row pointers of tiles t .. t+3
constexpr size_t kRingBytes = kRing * sizeof(const uint8_t *) * 2 * kTile;
constexpr size_t kSmemBytes = kQBytes + kKBytes + 2 * kRawBytes + kRingBytes;

struct AttnArgs {
    const uint16_t *q;          // bf16 [rows, heads, 512]
    const int *lists;           // int32 [rows, list_stride]
    const int *list_len;        // int32 [rows]
    int64_t list_stride;
    const float *sink;          // fp32 [heads]
    float scale;
    EntryLayout src[kMaxSources];       // unused trailing sources repeat source 0
    uint16_t *out;              // bf16 [rows, heads, 512]
    int heads;
    // split lists (gridDim.z > 1): unnormalised partial results, combined by k_combine
    float *part_o;              // [rows, heads, splits, 512]
    float *part_ml;             // [rows, heads, splits, 2]: running max, sum
};

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    return (uint32_t) float_to_bf16_bits(lo) | ((uint32_t) float_to_bf16_bits(hi) << 16);
}

// Q and K tiles in shared memory are [rows x 512] bf16 in 8x8 "core matrices" (8 rows x 16 bytes, 128
// contiguous bytes), row-block major: core (row/8, channel/8) at byte ((row/8) * 64 + channel/8) * 128, row
// row%8 at +16 * (row%8). It is the tensor cores' canonical no-swizzle layout, read K-major for Q K^T and
// MN-major for P K, and ldmatrix reads any 8 rows of 16 bytes without bank conflicts.
__device__ __forceinline__ int blocked(int row, int ch) {
    return ((row >> 3) * (kD / 8) + (ch >> 3)) * 64 + (row & 7) * 8 + (ch & 7);   // in bf16 elements
}
constexpr int kCoreBytes = 128;
[[maybe_unused]] constexpr int kRowBlockBytes = (kD / 8) * kCoreBytes;   // 8 rows x 512 channels

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define STRATA_WGMMA 1
// Shared-memory matrix descriptor, no swizzle: start, leading (LBO) and stride (SBO) byte offsets.
__device__ __forceinline__ uint64_t smem_desc(const void *p, uint32_t lbo, uint32_t sbo) {
    uint64_t addr = smem_addr(p);
    return ((addr & 0x3ffff) >> 4) | ((uint64_t) ((lbo & 0x3ffff) >> 4) << 16) | ((uint64_t) ((sbo & 0x3ffff) >> 4) << 32);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

// D[64 x 64] (+)= A[64 x 16] B[16 x 64]^T, A and B K-major in shared memory (per warp: the same 32-float
// fragment as eight m16n8 accumulators).
__device__ __forceinline__ void wgmma_s(float (&d)[8][4], uint64_t da, uint64_t db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,"
        "%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),
          "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]),
          "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]),
          "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
          "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
        : "l"(da), "l"(db), "r"(accumulate));
}

// D[64 x 256] += A[64 x 16] B[16 x 256], A (P, bf16) in registers, B MN-major in shared memory.
__device__ __forceinline__ void wgmma_o(float (&d)[32][4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint64_t db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.eq.b32 p, 1, 1;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1, 1;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]), "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]), "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]), "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]), "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]), "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]), "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]), "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]), "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
}
#endif

// Where one list entry's bytes are: data and scales pointers, null for a skipped or missing entry.
struct RowPtrs {
    const uint8_t *data[kTile];
    const uint8_t *scales[kTile];
};

__device__ __forceinline__ void resolve_row(const AttnArgs &a, int v, RowPtrs &dst, int r) {
    if (v == -1) {
        dst.data[r] = nullptr;
        dst.scales[r] = nullptr;
        return;
    }
    const EntryLayout &L = a.src[(uint32_t) v >> 30];
    uint32_t slot = (uint32_t) v & 0x3fffffffu;
    dst.data[r] = L.data32(slot);
    dst.scales[r] = L.scales32(slot);
}

__device__ __forceinline__ int list_entry(const int *list, int len, int e) { return e < len ? list[e] : -1; }

// Issues the cp.async copies of one tile's raw entries (rows with a null pointer are zero-filled) as one
// commit group; a tile past the list commits an empty group, so "all but the newest group" always means
// "up to the previous tile".
__device__ __forceinline__ void load_tile(const RowPtrs &rows, const uint8_t *dummy, uint8_t *raw, bool exists) {
    // 64 rows x (36 data chunks of 16 B + 8 B of scales): four threads per row, nine chunks each
    static_assert(kThreads == 4 * kTile, "four threads per row");
    if (exists) {
        int r = threadIdx.x >> 2, q = threadIdx.x & 3;
        const uint8_t *d = rows.data[r];
        bool ok = d != nullptr;
        uint8_t *dst = raw + r * kRawRow;
#pragma unroll
        for (int j = 0; j < 9; j++) {
            int part = q + 4 * j;
            cp_async16(dst + part * 16, ok ? d + part * 16 : dummy, ok);
        }
        if (q == 0) cp_async8(dst + 576, ok ? rows.scales[r] : dummy, ok);
    }
    cp_async_commit();
}

// raw entries -> bf16 K tile (blocked layout): warp w takes rows 8w..8w+7, lane (row = lane % 8, chunk
// group = lane / 8) converts 16-channel chunks; the 8 lanes of a store phase fill one 128-byte core matrix.
__device__ __forceinline__ void dequant_tile(const uint8_t *raw, uint16_t *ks) {
    int lane = threadIdx.x & 31;
    int r = (threadIdx.x >> 5) * 8 + (lane & 7);
    const uint8_t *row = raw + r * kRawRow;
#pragma unroll
    for (int it = 0; it < 8; it++) {
        int chunk = (lane >> 3) + 4 * it;       // channels 16*chunk .. +16
        uint4 lo, hi;
        if (chunk < kNope / 16) {
            uint4 v = *reinterpret_cast<const uint4 *>(row + chunk * 16);
            float s = __uint_as_float((uint32_t) row[576 + chunk / 4] << 23);
            const uint32_t w[4] = {v.x, v.y, v.z, v.w};
            uint32_t o[8];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                __half2_raw h0 = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t) (w[i] & 0xffff), __NV_E4M3);
                __half2_raw h1 = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t) (w[i] >> 16), __NV_E4M3);
                float2 f0 = __half22float2(*reinterpret_cast<__half2 *>(&h0));
                float2 f1 = __half22float2(*reinterpret_cast<__half2 *>(&h1));
                o[2 * i] = pack_bf16(f0.x * s, f0.y * s);
                o[2 * i + 1] = pack_bf16(f1.x * s, f1.y * s);
            }
            lo = make_uint4(o[0], o[1], o[2], o[3]);
            hi = make_uint4(o[4], o[5], o[6], o[7]);
        } else {
            const uint4 *v = reinterpret_cast<const uint4 *>(row + kNope + (chunk - kNope / 16) * 32);
            lo = v[0];
            hi = v[1];
        }
        *reinterpret_cast<uint4 *>(ks + blocked(r, chunk * 16)) = lo;
        *reinterpret_cast<uint4 *>(ks + blocked(r, chunk * 16 + 8)) = hi;
    }
    fence_proxy_async_shared();  // visible to the tensor cores' reads
}

__global__ void __launch_bounds__(kThreads, 1) k_sparse_attn(AttnArgs a) {
    strata_grid_begin();
    extern __shared__ __align__(16) uint8_t smem[];
    uint16_t *qs = reinterpret_cast<uint16_t *>(smem);
    uint16_t *ks = reinterpret_cast<uint16_t *>(smem + kQBytes);
    uint8_t *raw = smem + kQBytes + kKBytes;   // two buffers: tile t in raw[t % 2]
    // row pointers of tiles t .. t+3: computed a tile before their copies are issued, from list entries
    // loaded a tile before that, so no global load latency sits between a tile's math and the copies; the
    // copies themselves run two tiles ahead of the math
    RowPtrs *ring = reinterpret_cast<RowPtrs *>(smem + kQBytes + kKBytes + 2 * kRawBytes);

    int row = blockIdx.x;
    int h0 = blockIdx.y * kHeadsPerCta;
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    int hg = warp & 3, half = warp >> 2;
    // this CTA's share of the row's list: a contiguous run of tiles (all of them without splitting)
    const int *list = a.lists + (int64_t) row * a.list_stride;
    int tiles = (a.list_len[row] + kTile - 1) / kTile;
    int per_split = (tiles + gridDim.z - 1) / gridDim.z;
    int first = min(tiles, (int) blockIdx.z * per_split) * kTile;
    int len = min(a.list_len[row], first + per_split * kTile);
    const uint8_t *dummy = a.src[0].pool;
    int pending = -1;                         // list entry of tile t+3 for threads < 64
    if (threadIdx.x < kTile) {
        for (int t = 0; t < 3; t++) resolve_row(a, list_entry(list, len, first + t * kTile + threadIdx.x), ring[t], threadIdx.x);
        pending = list_entry(list, len, first + 3 * kTile + threadIdx.x);
    }
    __syncthreads();
    load_tile(ring[0], dummy, raw, first < len);
    load_tile(ring[1], dummy, raw + kRawBytes, first + kTile < len);
    // Q of this CTA's heads into shared memory (zero rows past the model's heads)
    for (int i = threadIdx.x; i < kHeadsPerCta * (kD / 8); i += kThreads) {
        int h = (i & 7) + ((i >> 9) << 3), c = ((i >> 3) & 63) * 8;   // 8 heads x one chunk per 8 lanes
        uint4 v = make_uint4(0, 0, 0, 0);
        if (h0 + h < a.heads) v = *reinterpret_cast<const uint4 *>(a.q + ((int64_t) row * a.heads + h0 + h) * kD + c);
        *reinterpret_cast<uint4 *>(qs + blocked(h, c)) = v;
    }
    fence_proxy_async_shared();

    float o[32][4];
#pragma unroll
    for (int i = 0; i < 32; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    // logits in log2 units (scale * log2 e folded in): every exponential is the hardware's 2^x, whose
    // relative error (about 2^-22) is far below the bf16 rounding P gets anyway
    const float zscale = a.scale * kLog2e;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};
    const int r_lo = lane / 4, cq = (lane % 4) * 2;

    for (int base = first, t = 0; base < len; base += kTile, t++) {
        const RowPtrs &cur = ring[t % kRing];
        uint8_t *tile_raw = raw + (t & 1) * kRawBytes;
        cp_async_wait<1>();          // this tile's copies landed (the next tile's may still run)
        __syncthreads();                      // ... for every thread; previous tile's K no longer read
        dequant_tile(tile_raw, ks);
        uint32_t vmask = 0;                   // this lane's 16 columns (8 n-tiles x 2)
#pragma unroll
        for (int nt = 0; nt < 8; nt++) {
            vmask |= (uint32_t) (cur.data[nt * 8 + cq] != nullptr) << (2 * nt);
            vmask |= (uint32_t) (cur.data[nt * 8 + cq + 1] != nullptr) << (2 * nt + 1);
        }
        __syncthreads();                      // K tile ready; this raw buffer free
        load_tile(ring[(t + 2) % kRing], dummy, tile_raw, base + 2 * kTile < len);
        float s[8][4];
#pragma unroll
        for (int nt = 0; nt < 8; nt++) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#ifdef STRATA_WGMMA
        // 64 heads x 64 entries over all 512 channels, computed by each warpgroup (both get the same bits;
        // that costs a second S product but no exchange of partial sums and no barrier)
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 32; kk++) {
            wgmma_s(s, smem_desc(reinterpret_cast<const uint8_t *>(qs) + 2 * kk * kCoreBytes, kCoreBytes, kRowBlockBytes),
                    smem_desc(reinterpret_cast<const uint8_t *>(ks) + 2 * kk * kCoreBytes, kCoreBytes, kRowBlockBytes),
                    kk > 0);
        }
        wgmma_commit();
        wgmma_wait0();
#else
#pragma unroll 4
        for (int kk = 0; kk < 32; kk++) {
            int ch = kk * 16;
            uint32_t a0, a1, a2, a3;
            ldmatrix_x4(a0, a1, a2, a3, qs + blocked(hg * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ch + (lane >> 4) * 8));
#pragma unroll
            for (int np = 0; np < 4; np++) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4(b0, b1, b2, b3, ks + blocked(np * 16 + (lane & 7) + (lane >> 4) * 8, ch + ((lane >> 3) & 1) * 8));
                mma_bf16(s[2 * np], a0, a1, a2, a3, b0, b1);
                mma_bf16(s[2 * np + 1], a0, a1, a2, a3, b2, b3);
            }
        }
#endif
        // online softmax; rows r_lo (c 0,1) and r_lo + 8 (c 2,3)
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int nt = 0; nt < 8; nt++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                bool ok = (vmask >> (2 * nt + (c & 1))) & 1;
                float z = ok ? s[nt][c] * zscale : -INFINITY;
                s[nt][c] = z;
                mx[c >> 1] = fmaxf(mx[c >> 1], z);
            }
        float alpha[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            float m_new = fmaxf(m_run[r], mx[r]);
            alpha[r] = m_new == -INFINITY ? 1.f : exp2f(m_run[r] - m_new);
            m_run[r] = m_new;
        }
        float lsum[2] = {0.f, 0.f};
        uint32_t p[8][2];
#pragma unroll
        for (int nt = 0; nt < 8; nt++) {
            float e[4];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float m = m_run[c >> 1];
                e[c] = m == -INFINITY ? 0.f : exp2f(s[nt][c] - m);
                lsum[c >> 1] += e[c];
            }
            p[nt][0] = pack_bf16(e[0], e[1]);
            p[nt][1] = pack_bf16(e[2], e[3]);
        }
#pragma unroll
        for (int r = 0; r < 2; r++) {
            lsum[r] += __shfl_xor_sync(0xffffffffu, lsum[r], 1);
            lsum[r] += __shfl_xor_sync(0xffffffffu, lsum[r], 2);
            l_run[r] = l_run[r] * alpha[r] + lsum[r];
        }
        if (!__all_sync(0xffffffffu, alpha[0] == 1.f && alpha[1] == 1.f)) {   // the maximum moved somewhere
#pragma unroll
            for (int i = 0; i < 32; i++) {
                o[i][0] *= alpha[0];
                o[i][1] *= alpha[0];
                o[i][2] *= alpha[1];
                o[i][3] *= alpha[1];
            }
        }
        // O += P K over this warp's 256 channels
#ifdef STRATA_WGMMA
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {              // entries 16kk..16kk+15, this warpgroup's 256 channels
            const uint8_t *b = reinterpret_cast<const uint8_t *>(ks) + (2 * kk) * kRowBlockBytes + half * 32 * kCoreBytes;
            wgmma_o(o, p[2 * kk][0], p[2 * kk][1], p[2 * kk + 1][0], p[2 * kk + 1][1],
                    smem_desc(b, kRowBlockBytes, kCoreBytes));
        }
        wgmma_commit();
        wgmma_wait0();
#else
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            uint32_t a0 = p[2 * kk][0], a1 = p[2 * kk][1], a2 = p[2 * kk + 1][0], a3 = p[2 * kk + 1][1];
#pragma unroll
            for (int np = 0; np < 16; np++) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3, ks + blocked(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                                              half * 256 + np * 16 + (lane >> 4) * 8));
                mma_bf16(o[2 * np], a0, a1, a2, a3, b0, b1);
                mma_bf16(o[2 * np + 1], a0, a1, a2, a3, b2, b3);
            }
        }
#endif
        if (threadIdx.x < kTile) {             // tile t+3's pointers; tile t+4's entry starts loading
            resolve_row(a, pending, ring[(t + 3) % kRing], threadIdx.x);
            pending = list_entry(list, len, base + 4 * kTile + threadIdx.x);
        }
    }
    cp_async_wait<0>();
    if (gridDim.z > 1) {                      // partial result of this split
#pragma unroll
        for (int r = 0; r < 2; r++) {
            int h = h0 + hg * 16 + r_lo + r * 8;
            if (h >= a.heads) continue;
            int64_t ph = ((int64_t) row * a.heads + h) * gridDim.z + blockIdx.z;
            float *dst = a.part_o + ph * kD + half * 256 + cq;
#pragma unroll
            for (int nt = 0; nt < 32; nt++)
                *reinterpret_cast<float2 *>(dst + nt * 8) = make_float2(o[nt][2 * r], o[nt][2 * r + 1]);
            if (half == 0 && (lane & 3) == 0) {
                a.part_ml[2 * ph] = m_run[r];
                a.part_ml[2 * ph + 1] = l_run[r];
            }
        }
        return;
    }
    // finish: divide by the softmax sum plus the sink's share
#pragma unroll
    for (int r = 0; r < 2; r++) {
        int h = h0 + hg * 16 + r_lo + r * 8;
        if (h >= a.heads) continue;
        float sink = a.sink[h];
        float denom = l_run[r] + (m_run[r] == -INFINITY ? 0.f : exp2f(sink * kLog2e - m_run[r]));
        float inv = denom > 0.f ? 1.f / denom : 0.f;
        uint16_t *dst = a.out + ((int64_t) row * a.heads + h) * kD + half * 256 + cq;
#pragma unroll
        for (int nt = 0; nt < 32; nt++) {
            float v0 = o[nt][2 * r] * inv, v1 = o[nt][2 * r + 1] * inv;
            *reinterpret_cast<uint32_t *>(dst + nt * 8) = pack_bf16(v0, v1);
        }
    }
}

// Merges the splits of one (row, head): rescale each split's sums to the common maximum, add the sink.
__global__ void k_combine(const float *__restrict__ part_o, const float *__restrict__ part_ml,
                          const float *__restrict__ sink, uint16_t *__restrict__ out, int heads, int splits) {
    strata_grid_begin();
    // running maxima are in log2 units (see k_sparse_attn)
    int row = blockIdx.x, h = blockIdx.y;
    int64_t ph = ((int64_t) row * heads + h) * splits;
    float m = -INFINITY;
    for (int s = 0; s < splits; s++) m = fmaxf(m, part_ml[2 * (ph + s)]);
    float l = 0.f;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    int c = threadIdx.x * 4;
    for (int s = 0; s < splits; s++) {
        float ms = part_ml[2 * (ph + s)];
        if (ms == -INFINITY) continue;
        float w = exp2f(ms - m);
        l += part_ml[2 * (ph + s) + 1] * w;
        float4 v = *reinterpret_cast<const float4 *>(part_o + (ph + s) * kD + c);
        acc[0] += v.x * w;
        acc[1] += v.y * w;
        acc[2] += v.z * w;
        acc[3] += v.w * w;
    }
    float denom = l + (m == -INFINITY ? 0.f : exp2f(sink[h] * kLog2e - m));
    float inv = denom > 0.f ? 1.f / denom : 0.f;
    uint2 packed = make_uint2(pack_bf16(acc[0] * inv, acc[1] * inv), pack_bf16(acc[2] * inv, acc[3] * inv));
    *reinterpret_cast<uint2 *>(out + ((int64_t) row * heads + h) * kD + c) = packed;
}

}  // namespace

extern "C" {

int64_t strata_sparse_attn_smem_bytes(void) { return (int64_t) kSmemBytes; }

// Splits a row's list over several CTAs when rows x head blocks would leave most SMs idle. Up to 8 rows a split
// may be a single tile of 64 entries: at one token a CTA holds all 64 heads of the row, so an unsplit list of 2-3
// tiles kept one SM busy for 20-26 us while the rest idled (one tile per split: the one-token step 3% shorter, 8
// rows 1%, docs/benchmarks.md). Wider batches keep at least two tiles per split, the rule they were measured with.
static int attn_splits(int num_rows, int num_heads, int64_t list_stride) {
    const int sms = strata_sm_count();
    int ctas = num_rows * ((num_heads + kHeadsPerCta - 1) / kHeadsPerCta);
    int tiles = (int) ((list_stride + kTile - 1) / kTile);
    int splits = sms / max(ctas, 1);          // never more CTAs than one wave
    splits = min(splits, max(1, num_rows <= 8 ? tiles : tiles / 2));
    return max(1, min(splits, 32));
}

int64_t strata_sparse_attn_workspace_bytes(int num_rows, int num_heads, int64_t list_stride) {
    int splits = attn_splits(num_rows, num_heads, list_stride);
    if (splits == 1) return 0;
    return (int64_t) num_rows * num_heads * splits * (kD + 2) * (int64_t) sizeof(float);
}

int strata_sparse_attn(int64_t q, int num_heads, int64_t lists, int64_t list_len, int64_t list_stride,
                       int64_t sink, float scale, const int64_t *sources, int num_sources, int64_t out,
                       int num_rows, int64_t workspace, int64_t stream) {
    if (num_rows <= 0) return 0;
    if (num_sources < 1 || num_sources > kMaxSources || num_heads <= 0) return (int) cudaErrorInvalidValue;
    AttnArgs a{};
    a.q = (const uint16_t *) q;
    a.lists = (const int *) lists;
    a.list_len = (const int *) list_len;
    a.list_stride = list_stride;
    a.sink = (const float *) sink;
    a.scale = scale;
    for (int i = 0; i < kMaxSources; i++) {
        const int64_t *s = sources + 6 * (i < num_sources ? i : 0);
        a.src[i] = EntryLayout{(uint8_t *) s[0], s[1], (int) s[2], (int) s[3], (int) s[4], (int) s[5]};
    }
    a.out = (uint16_t *) out;
    a.heads = num_heads;
    int splits = workspace ? attn_splits(num_rows, num_heads, list_stride) : 1;
    a.part_o = (float *) workspace;
    a.part_ml = splits > 1 ? (float *) workspace + (int64_t) num_rows * num_heads * splits * kD : nullptr;
    static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");
    cudaError_t e = cudaFuncSetAttribute(k_sparse_attn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kSmemBytes);
    if (e != cudaSuccess) return (int) e;
    dim3 grid(num_rows, (num_heads + kHeadsPerCta - 1) / kHeadsPerCta, splits);
    strata_launch(k_sparse_attn, grid, kThreads, kSmemBytes, (cudaStream_t) stream, a);
    STRATA_LAUNCH_CHECK();
    if (splits > 1) {
        strata_launch(k_combine, dim3(num_rows, num_heads), kD / 4, 0, (cudaStream_t) stream, a.part_o, a.part_ml,
            a.sink, a.out, num_heads, splits);
        STRATA_LAUNCH_CHECK();
    }
    return 0;
}

}  // extern "C"
