/*
 * Fused DeepSeek-V4 kernels (included from strata_cuda.h, inside its extern "C").
 * RoPE: every kernel takes rope_cos_sin, fp32 rows [cos(a_0..a_31) | sin(a_0..a_31)] per token, a_i =
 * fp32(pos) * freq_i (the engine fills them per step, as the reference fills its table).
 * Pointers are device addresses as int64; `stream` is a cudaStream_t as int64 (0 = legacy default).
 * `fused` = 1 runs the fused kernel, 0 the unfused baseline (same math as separate kernels, kept for
 * comparison; it needs `workspace` of the size the matching *_workspace_bytes function returns).
 *
 * Cache entry addressing (all kernels that write a paged cache):
 *   page  = pool + (slot / entries_per_page) * page_bytes
 *   data  = page + (slot % entries_per_page) * data_stride
 *   scale = page + scale_base + (slot % entries_per_page) * scale_stride
 * FlashMLA's split page: data_stride 576, scale_base entries_per_page*576, scale_stride 8.
 * A packed 584-byte entry: data_stride 584, scale_base 576, scale_stride 584.
 */

/* F1: compressor + RMSNorm + RoPE + quantise + paged insert, and the compressor-state update.
 * kv, score: fp32 rows [num_tokens, row_stride] (first coff*head_dim floats used; coff = 2 for ratio 4);
 * ape: fp32 [ratio, coff*head_dim]; norm_weight: fp32 [head_dim]; rope_cos_sin: fp32 [num_tokens, 64], for a
 * token that completes an entry the cos|sin row of the entry's position pos - ratio + 1 (others unused);
 * positions, token_seq: int32 [num_tokens]; seq_first_token, seq_first_pos, seq_num_tokens: int32 [seqs]
 * (this step's tokens of a sequence are consecutive); state_block_table: int32 [seqs, state_table_stride], a
 * window table (each row its first virtual page v0, then the pages of v0, v0 + 1, ...; -1 unmapped), maps
 * KvLayout's virtual state page (pos / span) * pages_per_span + (pos % span) / positions_per_page to a
 * physical page of state_page_bytes (the bucket row; fold the layer's slot offset into state_pool); the
 * entry is (pos % span) % positions_per_page, fp32 [kv (coff*hd) | score+ape (coff*hd)]. Saved positions: those
 * the next step still needs (KvLayout WindowRule(ratio, coff) of seq_first_pos + seq_num_tokens), and for
 * ratio 4 the four before each 256-position boundary whose state page is mapped (table entry >= 0): the
 * boundary windows prefix caching keeps (docs/kv-cache.md section 5); -1 pages are never written. out_slot: int64 [num_tokens], the compressed entry's slot for
 * tokens with (pos+1) % ratio == 0, else -1.  (head_dim, ratio) in {(512,4), (512,128), (128,4)}:
 * 512 writes the FP8 584-byte entry, 128 the Hadamard + FP4 68-byte indexer entry. */
int64_t strata_f1_workspace_bytes(int num_tokens, int head_dim);
int strata_f1_compress_insert(int64_t kv, int64_t score, int64_t row_stride, int64_t ape, int64_t norm_weight,
                              int64_t rope_cos_sin, int64_t positions, int64_t token_seq, int64_t seq_first_token,
                              int64_t seq_first_pos, int64_t seq_num_tokens, int64_t state_block_table,
                              int state_table_stride, int64_t state_pool, int64_t state_page_bytes,
                              int state_positions_per_page, int state_span_positions, int state_pages_per_span,
                              int64_t out_slot, int64_t cache_pool, int64_t cache_page_bytes,
                              int entries_per_page, int data_stride, int scale_base, int scale_stride,
                              int num_tokens, int ratio, int head_dim, float eps, int fused, int64_t workspace,
                              int64_t stream);

/* F2: inverse RoPE (query position) on channels [448,512) of each 512-wide head of o (bf16
 * [num_tokens, num_heads*512]), then FP8 e4m3 per 128 channels: out_fp8 [num_tokens, num_heads*512],
 * out_scales fp32 powers of two at [block * scale_stride_block + token * scale_stride_token]
 * (block = channel/128).  The fused kernel leaves o untouched; the unfused baseline rotates o in place. */
int64_t strata_f2_workspace_bytes(int num_tokens, int num_heads);
int strata_f2_inv_rope_fp8_quant(int64_t o, int64_t rope_cos_sin, int64_t out_fp8,
                                 int64_t out_scales, int num_tokens, int num_heads, int scale_stride_block,
                                 int scale_stride_token, int fused, int64_t workspace, int64_t stream);

/* F3: q (bf16 [num_tokens, num_heads, 512], in place) <- RoPE(headnorm(q)); kv (bf16 [num_tokens, 512])
 * -> RoPE, FP8 (per-64 ue8m0) of [0,448), bf16 [448,512), inserted as a 584-byte entry at slot_mapping
 * (int64 [num_tokens], -1 = padding).  The fused kernel leaves kv untouched; the unfused baseline
 * rotates kv's rope channels in place. */
int64_t strata_f3_workspace_bytes(int num_tokens);
int strata_f3_qnorm_rope_kv_insert(int64_t q, int64_t kv, int64_t slot_mapping, int64_t rope_cos_sin,
                                   int64_t cache_pool, int64_t page_bytes, int entries_per_page, int data_stride,
                                   int scale_base, int scale_stride, int num_tokens, int num_heads, float eps,
                                   int fused, int64_t workspace, int64_t stream);

/* RoPE on the last 64 channels of 512-wide bf16 rows (row r uses cos|sin row r / heads_per_token). */
int strata_rope_rows(int64_t x, int rows, int heads_per_token, int64_t rope_cos_sin, int inverse, int64_t stream);

/* ---- lightning indexer (indexer.cu): numerics identical to the CPU backend's Indexer ----------
 * q_prep: q bf16 [num_tokens, num_heads, 128] (wq_b output), w bf16 [num_tokens, num_heads]
 * (weights_proj output), rope_cos_sin fp32 [num_tokens, 64] -> q_codes int8 [num_tokens, num_heads, 128]
 * (twice the e2m1 value of fp4(hadamard(rope(q)) * 128^-0.5)), q_scales fp32 [num_tokens, num_heads, 4]
 * (ue8m0 per 32 channels), w_out fp32 [num_tokens, num_heads] = bf16(w * weight_scale). */
int strata_indexer_q_prep(int64_t q, int64_t w, int64_t rope_cos_sin, int64_t q_codes, int64_t q_scales,
                          int64_t w_out, int num_tokens, int num_heads, float weight_scale, int64_t stream);

/* scores: for query i (position query_pos[i], sequence query_seq[i]) and every visible compressed entry
 * j < (pos+1)/4, score = bf16(sum_h bf16(bf16(q_h.k_j) * w_h) over q_h.k_j > 0), written as bf16 bits to
 * scores[i * score_stride + j]. Keys are the 68-byte FP4 entries, entry j at slot
 * block_table[seq * table_stride + j / entries_per_page] * entries_per_page + j % entries_per_page of
 * the cache layout (key_pool with the layer's offset folded in; addressing as above). num_heads <= 128;
 * max_candidates bounds (pos+1)/4 over the queries. */
int strata_indexer_scores(int64_t q_codes, int64_t q_scales, int64_t w, int num_heads, int64_t query_pos,
                          int64_t query_seq, int64_t block_table, int table_stride, int64_t key_pool,
                          int64_t key_page_bytes, int entries_per_page, int data_stride, int scale_base,
                          int scale_stride, int64_t scores, int64_t score_stride, int num_queries,
                          int max_candidates, int64_t stream);

/* top-k: per query the min(k, (pos+1)/4) highest scores, the lower index first among equal scores (the
 * CPU backend's rule), as candidate indices in out_idx int32 [num_queries, k] (unordered; -1 past the
 * selection). If attn_list != 0, the same selection also goes to attn_list[i * list_stride + list_offset
 * ...] as tagged slots (tag << 30 | slot, slot from block_table as for the scores), -1 padded to k.
 * score_stride must be a multiple of 8; max_candidates (the largest (pos+1)/4) at most 262,144 (1M
 * positions). */
int strata_indexer_topk(int64_t scores, int64_t score_stride, int64_t query_pos, int k, int64_t out_idx,
                        int64_t query_seq, int64_t block_table, int table_stride, int entries_per_page,
                        int64_t attn_list, int64_t list_stride, int list_offset, int tag, int num_queries,
                        int max_candidates, int64_t stream);

/* ---- sparse attention with sink over FP8 entries (sparse_attn.cu) -------------------------------
 * q bf16 [num_rows, num_heads, 512] (after head norm and RoPE); out bf16 [num_rows, num_heads, 512]
 * (before inverse RoPE). Row r attends the first list_len[r] entries of lists[r * list_stride ...]:
 * a tagged slot (bits 30-31 source index, bits 0-29 slot in that source) or -1 (skip). sources: host
 * array of num_sources (<= 3) x {pool, page_bytes, entries_per_page, data_stride, scale_base,
 * scale_stride} describing 584-byte FP8 entries (data 16-byte aligned, 576 bytes: 448 e4m3 + 64 bf16;
 * scales 8-byte aligned: 7 ue8m0 + pad). sink fp32 [num_heads]; scale = 512^-0.5. */
int64_t strata_sparse_attn_smem_bytes(void);
/* When few rows would leave SMs idle, a row's list is split over several CTAs and merged by a second
 * kernel; that needs workspace of this many bytes (0: no split for this shape; workspace 0 = no split). */
int64_t strata_sparse_attn_workspace_bytes(int num_rows, int num_heads, int64_t list_stride);
int strata_sparse_attn(int64_t q, int num_heads, int64_t lists, int64_t list_len, int64_t list_stride,
                       int64_t sink, float scale, const int64_t *sources, int num_sources, int64_t out,
                       int num_rows, int64_t workspace, int64_t stream);
