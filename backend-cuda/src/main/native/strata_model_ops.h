/*
 * The model's glue kernels (model_ops.cu): embedding, hyper-connections, RMSNorm, the per-layer
 * attention lists and the staging of this step's KV entries. Included from strata_cuda.h inside its
 * extern "C". Tensors are row-major; bf16 values travel as their 16-bit patterns. Numerics follow the CPU
 * backend (io.strata.backend.cpu.ops.HyperConnection, RmsNorm): fp32 arithmetic, bf16 results.
 */

/* out[t, k, :] = embed[tokens[t], :] for every stream k < hc (ids already checked by the caller). */
int strata_embed(int64_t tokens, int64_t embed, int64_t out, int num_tokens, int dim, int hc, int64_t stream);

/* out[r, :] = bf16(weight * x[r, :] * rsqrt(mean(x[r, :]^2) + eps)); weight fp32 [n] or 0 (none);
 * x and out bf16 with row strides (elements); they may alias. out_q: 0, or bf16 [rows, n] (n % 128 == 0) that
 * receives out FP8-round-tripped per 128 channels, as strata_act_fp8_roundtrip would (what an FP8/FP4 linear reading
 * out computes first: given out_q with quantize_input = 0 it computes the same). */
int strata_rms_norm(int64_t x, int64_t x_stride, int64_t weight, int64_t out, int64_t out_stride, int64_t out_q,
                    int rows, int n, float eps, int64_t stream);

/* strata_rms_norm of (x, weight, out, out_q, n) and of (x2, weight2, out2, n2), both over the same rows, in one
 * launch. */
int strata_rms_norm_pair(int64_t x, int64_t x_stride, int64_t weight, int64_t out, int64_t out_stride, int64_t out_q,
                         int n, int64_t x2, int64_t x2_stride, int64_t weight2, int64_t out2, int64_t out2_stride,
                         int n2, int rows, float eps, int64_t stream);

/* Hyper-connection pre of a sub-layer, per token t: mixes = (fn . h_t) * rsqrt(mean(h_t^2) + norm_eps) over
 * the hc*dim streams (fn fp32 [(2+hc)*hc, hc*dim]); pre = sigmoid(m*scale0 + base) + hc_eps, post =
 * 2 sigmoid(m*scale1 + base), comb = row softmax + hc_eps then Sinkhorn (iters) as the CPU backend;
 * x = bf16(sum_k pre_k h_t[k]) then RMSNorm with norm (fp32 [dim]) -> out_x bf16 [T, dim];
 * out_mix fp32 [T, 2*hc + hc*hc] = pre | post | comb. h bf16 [T, hc*dim]. partials: scratch of
 * strata_hc_partials_bytes(T, hc, dim) bytes (the mixes' dot products are split over CTAs). out_xq: 0, or bf16
 * [T, dim] (dim % 128 == 0) that receives out_x FP8-round-tripped per 128 channels (as strata_rms_norm's out_q).
 * sinkhorn_later = 1: out_mix gets pre | the post and comb mixes as they are, and strata_hc_sinkhorn (on any stream
 * ordered after this one) completes it; the same values in the end. */
int strata_hc_pre(int64_t h, int64_t fn, int64_t base, int64_t scale, int64_t norm, int64_t out_x, int64_t out_xq,
                  int64_t out_mix, int64_t partials, int num_tokens, int hc, int dim, int iters, float hc_eps,
                  float norm_eps, int sinkhorn_later, int64_t stream);

/* The post weights and the Sinkhorn-normalised combination matrix of a pre run with sinkhorn_later = 1, in place
 * in mix fp32 [T, 2*hc + hc*hc] (base and scale: that pre's). */
int strata_hc_sinkhorn(int64_t mix, int64_t base, int64_t scale, int num_tokens, int hc, int iters, float hc_eps,
                       int64_t stream);

/* Bytes of the partials scratch strata_hc_pre and strata_hc_head need for num_tokens rows. */
int64_t strata_hc_partials_bytes(int num_tokens, int hc, int dim);

/* next[t, k, :] = bf16(post_k * y[t, :] + sum_j comb[j][k] * res[t, j, :]); mix as hc_pre wrote it. */
int strata_hc_post(int64_t y, int64_t res, int64_t mix, int64_t next, int num_tokens, int hc, int dim, int64_t stream);

/* strata_hc_post(y, res, mix, next) then strata_hc_pre(next, ..., out_mix = mix) in two kernels instead of three:
 * the post's values are computed where the mixes' dot products need them (same arithmetic, same results). mix
 * holds the previous pre's on entry and this pre's on return. */
int strata_hc_post_pre(int64_t y, int64_t res, int64_t next, int64_t fn, int64_t base, int64_t scale, int64_t norm,
                       int64_t out_x, int64_t out_xq, int64_t mix, int64_t partials, int num_tokens, int hc, int dim,
                       int iters, float hc_eps, float norm_eps, int sinkhorn_later, int64_t stream);

/* The head's pre (sigmoid, no Sinkhorn) and the final norm for the rows listed in rows int32 [R]:
 * out_x[i] = RMSNorm(bf16(sum_k pre_k h_{rows[i]}[k])), pre = sigmoid(mixes*scale + base) + hc_eps,
 * mixes from fn fp32 [hc, hc*dim]; scale is one fp32 value on the device; partials as strata_hc_pre's. */
int strata_hc_head(int64_t h, int64_t rows, int64_t fn, int64_t base, int64_t scale, int64_t norm, int64_t out_x,
                   int64_t partials, int num_rows, int hc, int dim, float hc_eps, float norm_eps, int64_t stream);

/* Attention lists of one layer (tagged entries for strata_sparse_attn; source 0 = the layer's SWA
 * pool, 1 = its compressed pool, 2 = this step's staged entries, row index = slot). Row t (position p,
 * chunk s) gets window entries for positions max(window_floor[s], p - window + 1) .. p in list slots
 * [0, window) (positions of this chunk from staging, earlier ones through swa_table, -1 elsewhere), then
 * for ratio 128 every visible compressed entry j < (p+1)/128 through comp_table; for ratio 4 the
 * indexer's top-k fills [window, window + topk) later. list_len[t] = window + (ratio 4: topk; ratio 128:
 * visible; 0: 0). Tables are int32 [S, stride], -1 unmapped: comp_table dense per chunk from virtual page 0,
 * swa_table a window table (each row its first virtual page, then the pages from there). */
int strata_attn_lists(int64_t positions, int64_t token_seq, int64_t seq_first_token, int64_t seq_first_pos,
                      int64_t window_floor, int64_t swa_table, int swa_stride, int swa_positions_per_page,
                      int swa_span, int swa_pages_per_span, int64_t comp_table, int comp_stride, int ratio,
                      int topk, int window, int64_t lists, int64_t list_len, int64_t list_stride, int num_tokens,
                      int64_t stream);

/* Copies entry t (slot t) of the staging layout src_* to slot slots[t] (int64, -1 = skip) of the cache
 * layout dst_*: data_bytes of values and scale_bytes of scales (addressing as in strata_kernels.h). */
int strata_copy_entries(int64_t src_pool, int64_t src_page_bytes, int src_entries_per_page, int src_data_stride,
                        int src_scale_base, int src_scale_stride, int data_bytes, int scale_bytes, int64_t slots,
                        int64_t pool, int64_t page_bytes, int entries_per_page, int data_stride, int scale_base,
                        int scale_stride, int num_tokens, int64_t stream);

/* A step's RoPE rows from table fp32 [positions, row_floats] (every position's [cos | sin], filled by the host):
 * for token t at positions[t] = p, out_q[t] = table[p]; out_c4[t] = table[p - 3] when (p + 1) % 4 == 0, else zeros;
 * out_c128[t] = table[p - 127] when (p + 1) % 128 == 0, else zeros (io.strata.backend.cuda.RopeTables). */
int strata_rope_gather(int64_t table, int64_t positions, int num_tokens, int row_floats, int64_t out_q, int64_t out_c4,
                       int64_t out_c128, int64_t stream);

/* out_tokens int32 [rows] = per row of logits fp32 [rows, vocab], the first index of its largest value (a NaN wins
 * only at index 0, -0 and +0 tie): the engine's greedy draw (io.strata.spi.exec.StepResult.argmax), taken where the
 * logits are so that a greedy row need not travel to the host. */
int strata_argmax_rows(int64_t logits, int rows, int vocab, int64_t out_tokens, int64_t stream);

/* Benchmarks only: fills bytes at dst with seeded pseudo-random bytes, each ANDed with mask. */
int strata_fill_random(int64_t dst, int64_t bytes, int64_t seed, int mask, int64_t stream);
// Benchmarks: ue8m0 scale bytes [offset, offset + bytes) of each listed page row (int32 row indices on the device)
// set to a base in 120..126 per `group` bytes plus 0 or 1 (one entry's scales within a factor of two).
int strata_fill_scales(int64_t pool, int64_t row_bytes, int64_t rows, int n, int offset, int bytes, int group,
                       int64_t seed, int64_t stream);
