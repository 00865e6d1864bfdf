package io.strata.backend.cuda.nat;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The raw binding to {@code libstrata_cuda.so} (see {@code src/main/native/strata_cuda.h}). Every
 * function returns a CUDA error code; callers go through {@link io.strata.backend.cuda.CudaRuntime},
 * which turns codes into exceptions. Device and host addresses travel as {@code long}s so that a
 * whole step's metadata can be handed over in one call.
 *
 * <p>No static initialiser loads the library: {@link io.strata.backend.cuda.NativeLibrary} does it
 * exactly once, so a missing library becomes a probe result rather than an
 * {@code ExceptionInInitializerError}.
 */
@Platform(include = "strata_cuda.h", link = "strata_cuda")
public final class CudaNative {
    private CudaNative() {
    }

    public static native int strata_cuda_device_count(int[] count);

    public static native @Cast("const char*") BytePointer strata_cuda_error_string(int err);

    public static native @Cast("const char*") BytePointer strata_cuda_error_name(int err);

    public static native int strata_cuda_device_info(int device, @Cast("char*") byte[] name, int nameLen,
            @Cast("int64_t*") long[] totalBytes, @Cast("int64_t*") long[] freeBytes, int[] ccMajor,
            int[] ccMinor, int[] smCount, int[] driverVersion, int[] runtimeVersion);

    public static native int strata_cuda_set_device(int device);

    public static native int strata_cuda_mem_info(@Cast("int64_t*") long[] freeBytes, @Cast("int64_t*") long[] totalBytes);

    public static native int strata_cuda_malloc(@Cast("int64_t") long bytes, @Cast("int64_t*") long[] devicePtr);

    public static native int strata_cuda_free(@Cast("int64_t") long devicePtr);

    public static native int strata_cuda_malloc_host(@Cast("int64_t") long bytes, @Cast("int64_t*") long[] hostPtr);

    public static native int strata_cuda_free_host(@Cast("int64_t") long hostPtr);

    public static native int strata_cuda_memcpy(@Cast("int64_t") long dst, @Cast("int64_t") long src,
            @Cast("int64_t") long bytes, int kind);

    public static native int strata_cuda_memset(@Cast("int64_t") long dst, int value, @Cast("int64_t") long bytes);

    public static native int strata_cuda_synchronize();

    public static native int strata_cuda_clear_error();

    public static native int strata_stream_create(@Cast("int64_t*") long[] stream);

    public static native int strata_stream_destroy(@Cast("int64_t") long stream);

    public static native int strata_stream_synchronize(@Cast("int64_t") long stream);

    public static native int strata_event_create(int timed, @Cast("int64_t*") long[] event);

    public static native int strata_event_destroy(@Cast("int64_t") long event);

    public static native int strata_event_record(@Cast("int64_t") long event, @Cast("int64_t") long stream);

    public static native int strata_stream_wait_event(@Cast("int64_t") long stream, @Cast("int64_t") long event);

    public static native int strata_event_elapsed_ms(@Cast("int64_t") long start, @Cast("int64_t") long end,
            float[] ms);

    public static native int strata_cuda_memcpy_async(@Cast("int64_t") long dst, @Cast("int64_t") long src,
            @Cast("int64_t") long bytes, int kind, @Cast("int64_t") long stream);

    public static native int strata_graph_begin_capture(@Cast("int64_t") long stream);

    public static native int strata_graph_end_capture(@Cast("int64_t") long stream, @Cast("int64_t*") long[] exec,
            @Cast("int64_t*") long[] nodes);

    public static native int strata_graph_launch(@Cast("int64_t") long exec, @Cast("int64_t") long stream);

    public static native int strata_graph_destroy(@Cast("int64_t") long exec);

    public static native int strata_fill_random(@Cast("int64_t") long dst, @Cast("int64_t") long bytes,
            @Cast("int64_t") long seed, int mask, @Cast("int64_t") long stream);

    public static native int strata_fill_scales(@Cast("int64_t") long pool, @Cast("int64_t") long rowBytes,
            @Cast("int64_t") long rows, int n, int offset, int bytes, int group, @Cast("int64_t") long seed,
            @Cast("int64_t") long stream);
    // ---- kernels (see strata_kernels.h for the argument contract) ----

    public static native @Cast("int64_t") long strata_f1_workspace_bytes(int numTokens, int headDim);

    public static native int strata_f1_compress_insert(@Cast("int64_t") long kv, @Cast("int64_t") long score,
            @Cast("int64_t") long rowStride, @Cast("int64_t") long ape, @Cast("int64_t") long normWeight,
            @Cast("int64_t") long ropeCosSin, @Cast("int64_t") long positions, @Cast("int64_t") long tokenSeq,
            @Cast("int64_t") long seqFirstToken, @Cast("int64_t") long seqFirstPos, @Cast("int64_t") long seqNumTokens,
            @Cast("int64_t") long stateBlockTable, int stateTableStride, @Cast("int64_t") long statePool,
            @Cast("int64_t") long statePageBytes, int statePositionsPerPage, int stateSpanPositions,
            int statePagesPerSpan, @Cast("int64_t") long outSlot,
            @Cast("int64_t") long cachePool, @Cast("int64_t") long cachePageBytes, int entriesPerPage, int dataStride,
            int scaleBase, int scaleStride, int numTokens, int ratio, int headDim, float eps, int fused,
            @Cast("int64_t") long workspace, @Cast("int64_t") long stream);

    public static native @Cast("int64_t") long strata_f2_workspace_bytes(int numTokens, int numHeads);

    public static native int strata_f2_inv_rope_fp8_quant(@Cast("int64_t") long o,
            @Cast("int64_t") long ropeCosSin, @Cast("int64_t") long outFp8, @Cast("int64_t") long outScales,
            int numTokens, int numHeads, int scaleStrideBlock, int scaleStrideToken, int fused,
            @Cast("int64_t") long workspace, @Cast("int64_t") long stream);

    public static native @Cast("int64_t") long strata_f3_workspace_bytes(int numTokens);

    public static native int strata_f3_qnorm_rope_kv_insert(@Cast("int64_t") long q, @Cast("int64_t") long kv,
            @Cast("int64_t") long slotMapping, @Cast("int64_t") long ropeCosSin,
            @Cast("int64_t") long cachePool, @Cast("int64_t") long pageBytes, int entriesPerPage, int dataStride,
            int scaleBase, int scaleStride, int numTokens, int numHeads, float eps, int fused,
            @Cast("int64_t") long workspace, @Cast("int64_t") long stream);

    public static native int strata_rope_rows(@Cast("int64_t") long x, int rows, int headsPerToken,
            @Cast("int64_t") long ropeCosSin, int inverse, @Cast("int64_t") long stream);

    // ---- lightning indexer and sparse attention ----

    public static native int strata_indexer_q_prep(@Cast("int64_t") long q, @Cast("int64_t") long w,
            @Cast("int64_t") long ropeCosSin, @Cast("int64_t") long qCodes, @Cast("int64_t") long qScales,
            @Cast("int64_t") long wOut, int numTokens, int numHeads, float weightScale, @Cast("int64_t") long stream);

    public static native int strata_indexer_scores(@Cast("int64_t") long qCodes, @Cast("int64_t") long qScales,
            @Cast("int64_t") long w, int numHeads, @Cast("int64_t") long queryPos, @Cast("int64_t") long querySeq,
            @Cast("int64_t") long blockTable, int tableStride, @Cast("int64_t") long keyPool,
            @Cast("int64_t") long keyPageBytes, int entriesPerPage, int dataStride, int scaleBase, int scaleStride,
            @Cast("int64_t") long scores, @Cast("int64_t") long scoreStride, int numQueries, int maxCandidates,
            @Cast("int64_t") long stream);

    public static native int strata_indexer_topk(@Cast("int64_t") long scores, @Cast("int64_t") long scoreStride,
            @Cast("int64_t") long queryPos, int k, @Cast("int64_t") long outIdx, @Cast("int64_t") long querySeq,
            @Cast("int64_t") long blockTable, int tableStride, int entriesPerPage, @Cast("int64_t") long attnList,
            @Cast("int64_t") long listStride, int listOffset, int tag, int numQueries, int maxCandidates,
            @Cast("int64_t") long stream);

    public static native @Cast("int64_t") long strata_sparse_attn_workspace_bytes(int numRows, int numHeads,
            @Cast("int64_t") long listStride);

    public static native int strata_sparse_attn(@Cast("int64_t") long q, int numHeads, @Cast("int64_t") long lists,
            @Cast("int64_t") long listLen, @Cast("int64_t") long listStride, @Cast("int64_t") long sink, float scale,
            @Cast("const int64_t*") long[] sources, int numSources, @Cast("int64_t") long out, int numRows,
            @Cast("int64_t") long workspace, @Cast("int64_t") long stream);

    // ---- model glue: embedding, hyper-connections, norms, attention lists, staging

    public static native int strata_embed(@Cast("int64_t") long tokens, @Cast("int64_t") long embed,
            @Cast("int64_t") long out, int numTokens, int dim, int hc, @Cast("int64_t") long stream);

    public static native int strata_rope_gather(@Cast("int64_t") long table, @Cast("int64_t") long positions,
            int numTokens, int rowFloats, @Cast("int64_t") long outQ, @Cast("int64_t") long outC4,
            @Cast("int64_t") long outC128, @Cast("int64_t") long stream);

    public static native int strata_argmax_rows(@Cast("int64_t") long logits, int rows, int vocab,
            @Cast("int64_t") long outTokens, @Cast("int64_t") long stream);

    public static native int strata_rms_norm(@Cast("int64_t") long x, @Cast("int64_t") long xStride,
            @Cast("int64_t") long weight, @Cast("int64_t") long out, @Cast("int64_t") long outStride,
            @Cast("int64_t") long outQ, int rows, int n, float eps, @Cast("int64_t") long stream);

    public static native int strata_rms_norm_pair(@Cast("int64_t") long x, @Cast("int64_t") long xStride,
            @Cast("int64_t") long weight, @Cast("int64_t") long out, @Cast("int64_t") long outStride,
            @Cast("int64_t") long outQ, int n, @Cast("int64_t") long x2, @Cast("int64_t") long x2Stride, @Cast("int64_t") long weight2,
            @Cast("int64_t") long out2, @Cast("int64_t") long out2Stride, int n2, int rows, float eps,
            @Cast("int64_t") long stream);

    public static native int strata_hc_pre(@Cast("int64_t") long h, @Cast("int64_t") long fn,
            @Cast("int64_t") long base, @Cast("int64_t") long scale, @Cast("int64_t") long norm,
            @Cast("int64_t") long outX, @Cast("int64_t") long outXq, @Cast("int64_t") long outMix,
            @Cast("int64_t") long partials, int numTokens, int hc, int dim, int iters, float hcEps, float normEps,
            int sinkhornLater, @Cast("int64_t") long stream);

    public static native int strata_hc_sinkhorn(@Cast("int64_t") long mix, @Cast("int64_t") long base,
            @Cast("int64_t") long scale, int numTokens, int hc, int iters, float hcEps, @Cast("int64_t") long stream);

    public static native @Cast("int64_t") long strata_hc_partials_bytes(int numTokens, int hc, int dim);

    public static native int strata_hc_post(@Cast("int64_t") long y, @Cast("int64_t") long res,
            @Cast("int64_t") long mix, @Cast("int64_t") long next, int numTokens, int hc, int dim,
            @Cast("int64_t") long stream);

    public static native int strata_hc_post_pre(@Cast("int64_t") long y, @Cast("int64_t") long res,
            @Cast("int64_t") long next, @Cast("int64_t") long fn, @Cast("int64_t") long base,
            @Cast("int64_t") long scale, @Cast("int64_t") long norm, @Cast("int64_t") long outX,
            @Cast("int64_t") long outXq, @Cast("int64_t") long mix, @Cast("int64_t") long partials, int numTokens,
            int hc, int dim, int iters, float hcEps, float normEps, int sinkhornLater, @Cast("int64_t") long stream);

    public static native int strata_hc_head(@Cast("int64_t") long h, @Cast("int64_t") long rows,
            @Cast("int64_t") long fn, @Cast("int64_t") long base, @Cast("int64_t") long scale,
            @Cast("int64_t") long norm, @Cast("int64_t") long outX, @Cast("int64_t") long partials, int numRows,
            int hc, int dim, float hcEps, float normEps, @Cast("int64_t") long stream);

    public static native int strata_attn_lists(@Cast("int64_t") long positions, @Cast("int64_t") long tokenSeq,
            @Cast("int64_t") long seqFirstToken, @Cast("int64_t") long seqFirstPos, @Cast("int64_t") long windowFloor,
            @Cast("int64_t") long swaTable, int swaStride, int swaPositionsPerPage, int swaSpan, int swaPagesPerSpan,
            @Cast("int64_t") long compTable, int compStride, int ratio, int topk, int window,
            @Cast("int64_t") long lists, @Cast("int64_t") long listLen, @Cast("int64_t") long listStride,
            int numTokens, @Cast("int64_t") long stream);

    public static native int strata_copy_entries(@Cast("int64_t") long srcPool, @Cast("int64_t") long srcPageBytes,
            int srcEntriesPerPage, int srcDataStride, int srcScaleBase, int srcScaleStride, int dataBytes,
            int scaleBytes, @Cast("int64_t") long slots, @Cast("int64_t") long pool, @Cast("int64_t") long pageBytes,
            int entriesPerPage, int dataStride, int scaleBase, int scaleStride, int numTokens,
            @Cast("int64_t") long stream);

    // ---- linears and MoE (see strata_linear.h for the argument contract) ----

    public static native int strata_fp4_prepare(@Cast("int64_t") long w, @Cast("int64_t") long wBytes,
            @Cast("int64_t") long scale, @Cast("int64_t") long sBytes, int[] ordinary);

    public static native int strata_act_fp8_roundtrip(@Cast("int64_t") long x, int lda, int m, int cols,
            @Cast("int64_t") long out, int ldo, @Cast("int64_t") long stream);

    public static native int strata_linear(int fmt, @Cast("int64_t") long w, @Cast("int64_t") long scale, int rows,
            int cols, int groups, @Cast("int64_t") long x, int lda, int m, @Cast("int64_t") long y, int ldy,
            int bf16Out, int quantizeInput, @Cast("int64_t") long workspace, @Cast("int64_t") long stream);

    public static native int strata_moe_tile_rows(int m, int k, int experts);

    public static native int strata_moe_route(@Cast("int64_t") long scores, int m, int experts, int k,
            @Cast("int64_t") long bias, @Cast("int64_t") long tid2eid, int vocab, @Cast("int64_t") long tokens,
            float routeScale, @Cast("int64_t") long ids, @Cast("int64_t") long weights, @Cast("int64_t") long stream);

    public static native int strata_moe_plan(@Cast("int64_t") long ids, @Cast("int64_t") long weights, int m, int k,
            int experts, int tileRows, @Cast("int64_t") long offsets, @Cast("int64_t") long tileOffsets,
            @Cast("int64_t") long sortedRows, @Cast("int64_t") long sortedWeights, @Cast("int64_t") long slotOfPair,
            @Cast("int64_t") long stream);

    public static native int strata_moe_expert_linear(int fmt, @Cast("int64_t") long w, @Cast("int64_t") long scale,
            @Cast("int64_t") long wStride, @Cast("int64_t") long sStride, int rows, int cols, int experts, int pairs,
            int tileRows, @Cast("int64_t") long offsets, @Cast("int64_t") long tileOffsets, @Cast("int64_t") long gather,
            @Cast("int64_t") long x, int lda, @Cast("int64_t") long y, int ldy, @Cast("int64_t") long stream);

    public static native int strata_moe_expert_linear_pair(int fmt, @Cast("int64_t") long w,
            @Cast("int64_t") long scale, @Cast("int64_t") long wPair, @Cast("int64_t") long scalePair,
            @Cast("int64_t") long wStride, @Cast("int64_t") long sStride, int rows, int cols, int experts, int pairs,
            int tileRows, @Cast("int64_t") long offsets, @Cast("int64_t") long tileOffsets, @Cast("int64_t") long gather,
            @Cast("int64_t") long x, int lda, @Cast("int64_t") long y, @Cast("int64_t") long yPair, int ldy,
            @Cast("int64_t") long stream);

    public static native int strata_moe_swiglu(@Cast("int64_t") long gate, @Cast("int64_t") long up,
            @Cast("int64_t") long rowWeights, int rows, int inter, float limit, int quantize, @Cast("int64_t") long out,
            @Cast("int64_t") long stream);

    public static native int strata_moe_combine(@Cast("int64_t") long routed, @Cast("int64_t") long shared,
            @Cast("int64_t") long ids, @Cast("int64_t") long slotOfPair, int m, int k, int dim, @Cast("int64_t") long out,
            @Cast("int64_t") long stream);
}
