/*
 * Linear layers and the MoE sub-layer (linear.cu, moe.cu; included from strata_cuda.h, inside its extern "C").
 * Conventions as strata_kernels.h: device pointers and cudaStream_t as int64, cudaError_t codes returned.
 *
 * Weight formats (the low byte of fmt): 0 BF16 [rows, cols]; 1 F32 [rows, cols]; 2 FP8 e4m3 [rows, cols] with
 * ue8m0 scale bytes [ceil(rows/128), ceil(cols/128)]; 3 FP4 e2m1 [rows, cols/2] with ue8m0 scale bytes
 * [rows, cols/32], the weights as strata_fp4_prepare leaves the checkpoint's bytes (two codes per byte, low
 * nibble = even element, then the bits of every 32-bit word permuted). fmt | 0x100 (FP4 only): every scale
 * byte is in 1..254, as strata_fp4_prepare reported; the kernels then skip checking for 0 and 255.
 * Activations are bf16 with a row stride in elements; every kernel needs cols % 8 == 0, lda % 8 == 0 and a
 * 16-byte aligned x.
 */

/* FP4 checkpoint bytes on the device into the kernels' layout, in place: w (4-byte aligned, w_bytes % 4 == 0)
 * holds whole rows of one or more matrices; scale their s_bytes scale bytes. Sets *ordinary = 1 when every
 * scale byte is in 1..254 (pass fmt 3 | 0x100 then), else 0. Synchronous (load time). */
int strata_fp4_prepare(int64_t w, int64_t w_bytes, int64_t scale, int64_t s_bytes, int *ordinary);

/* out[r, :cols] = the FP8 e4m3 quantize-dequantize of x[r, :cols] per 128 channels (ue8m0 scale), bf16.
 * cols % 128 == 0; out may equal x. */
int strata_act_fp8_roundtrip(int64_t x, int lda, int m, int cols, int64_t out, int ldo, int64_t stream);

/* y[r, g*rows + n] = sum_k x[r, g*cols + k] * W[g*rows + n, k] for g < groups (groups = 1: a plain linear;
 * > 1: wo_a, FP8 then needs rows % 128 == 0). fp32 accumulation; y bf16 (bf16_out = 1, round to nearest even)
 * or fp32, row stride ldy. quantize_input = 1 (groups 1, cols % 128 == 0) FP8-round-trips x per 128 channels
 * first. `workspace` (16-byte aligned; needed by FP8 and FP4 weights): with in = groups * cols and m4 = m rounded
 * up to a multiple of 4, at least align256(2 * m * in) + align256(4 * m4 * ceil(in / 128)) bytes. Up to 16 rows it
 * receives the round trip (m * cols bf16); FP8 weights at more rows (in % 128 == 0) stage x there instead: per row
 * and 128 channels, f16 quotients of a power of two [m, in] followed, at the first 256-byte boundary, by the powers
 * of two (fp32 [in / 128, m4]). */
int strata_linear(int fmt, int64_t w, int64_t scale, int rows, int cols, int groups, int64_t x, int lda, int m,
                  int64_t y, int ldy, int bf16_out, int quantize_input, int64_t workspace, int64_t stream);

/* ---- MoE (see moe.cu for the step-by-step math) ---- */

/* Rows per tile of the expert GEMMs for m tokens routed to k of the experts each (1, 4 or 8: SIMT kernels,
 * 64: tensor cores). */
int strata_moe_tile_rows(int m, int k, int experts);

/* scores: fp32 [m, experts] gate logits. bias: fp32 [experts] or 0; tid2eid: int32 [vocab, k] or 0 (hash
 * routing by tokens, int32 [m]). Writes ids int32 [m, k] and weights fp32 [m, k]. experts <= 1024, k <= 16. */
int strata_moe_route(int64_t scores, int m, int experts, int k, int64_t bias, int64_t tid2eid, int vocab,
                     int64_t tokens, float route_scale, int64_t ids, int64_t weights, int64_t stream);

/* Counting sort of the m*k (token, j) pairs by expert: offsets int32 [experts+1] (slot ranges), tile_offsets
 * int32 [experts+1] (tiles of tile_rows slots), sorted_rows int32 [m*k] (slot -> token), sorted_weights fp32
 * [m*k], slot_of_pair int32 [m*k]. */
int strata_moe_plan(int64_t ids, int64_t weights, int m, int k, int experts, int tile_rows, int64_t offsets,
                    int64_t tile_offsets, int64_t sorted_rows, int64_t sorted_weights, int64_t slot_of_pair,
                    int64_t stream);

/* For every slot s of expert e: y[s, :rows] = bf16(x[gather[s] (or s if gather = 0), :cols] . W_e^T), W_e at
 * w + e*w_stride (scales at scale + e*s_stride). fmt BF16, FP8 or FP4; x is used as is (quantize it first). */
int strata_moe_expert_linear(int fmt, int64_t w, int64_t scale, int64_t w_stride, int64_t s_stride, int rows,
                             int cols, int experts, int pairs, int tile_rows, int64_t offsets, int64_t tile_offsets,
                             int64_t gather, int64_t x, int lda, int64_t y, int ldy, int64_t stream);

/* Two expert matrices of the same shape, format and strides over the same slots in one launch (w1 and w3):
 * y = x . W_e^T as above, y_pair = x . Wpair_e^T (same ldy). Every output is summed in the order the single
 * launch of its matrix would sum it. */
int strata_moe_expert_linear_pair(int fmt, int64_t w, int64_t scale, int64_t w_pair, int64_t scale_pair,
                                  int64_t w_stride, int64_t s_stride, int rows, int cols, int experts, int pairs,
                                  int tile_rows, int64_t offsets, int64_t tile_offsets, int64_t gather, int64_t x,
                                  int lda, int64_t y, int64_t y_pair, int ldy, int64_t stream);

/* out[r] = bf16(w_r * silu(min(g, limit)) * clamp(u, +-limit)) over bf16 [rows, inter] rows (limit <= 0: no
 * clamp; row_weights 0: w = 1), then with quantize = 1 FP8-round-tripped per 128. inter % 128 == 0. */
int strata_moe_swiglu(int64_t gate, int64_t up, int64_t row_weights, int rows, int inter, float limit, int quantize,
                      int64_t out, int64_t stream);

/* out[t] = bf16(sum over t's experts in index order of routed[slot] (fp32 from 0) + shared[t]); bf16 rows of dim. */
int strata_moe_combine(int64_t routed, int64_t shared, int64_t ids, int64_t slot_of_pair, int m, int k, int dim,
                       int64_t out, int64_t stream);
