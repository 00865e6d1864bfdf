package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;

/**
 * The three fused kernels, one coarse call per step (all tokens of all sequences), with their unfused
 * baselines, and the bf16 inverse RoPE that is the reference path into {@code wo_a}. Arguments are device
 * addresses; see {@code strata_kernels.h} for shapes.
 */
public final class FusedKernels {
    private FusedKernels() {
    }

    /** Which implementation runs: the fused kernel, or the same math as separate kernels. */
    public enum Variant {
        FUSED, UNFUSED;

        int flag() {
            return this == FUSED ? 1 : 0;
        }
    }

    /**
     * One compressor step (F1). Device arrays: kv/score fp32 [numTokens, rowStride]; ape fp32
     * [ratio, coff*headDim]; normWeight fp32 [headDim]; ropeCosSin fp32 [numTokens, 64] (see
     * {@link RopeTables}; for a token completing an entry, the row of position {@code pos - ratio + 1});
     * positions, tokenSeq int32
     * [numTokens]; seqFirstToken, seqFirstPos, seqNumTokens int32 [seqs]; stateBlockTable int32
     * [seqs, stateTableStride] mapping KvLayout's virtual state pages to physical ones (see
     * {@link StatePaging}); outSlot int64 [numTokens] (-1 where no entry completes).
     */
    public record CompressorStep(long kv, long score, long rowStride, long ape, long normWeight, long ropeCosSin,
                                 long positions, long tokenSeq, long seqFirstToken, long seqFirstPos,
                                 long seqNumTokens, long stateBlockTable, int stateTableStride, long statePool,
                                 StatePaging statePaging, long outSlot, long cachePool,
                                 EntryLayout layout, int numTokens, int ratio, int headDim, float eps) {
        public CompressorStep {
            boolean supported = (headDim == 512 && (ratio == 4 || ratio == 128)) || (headDim == 128 && ratio == 4);
            if (!supported) {
                throw new IllegalArgumentException("compressor (head " + headDim + ", ratio " + ratio
                        + ") is not one of (512,4), (512,128), (128,4)");
            }
            int coff = ratio == 4 ? 2 : 1;
            if (rowStride < (long) coff * headDim) {
                throw new IllegalArgumentException("row stride " + rowStride + " < " + coff * headDim);
            }
            long stateEntry = 2L * coff * headDim * 4;
            if (stateEntry * statePaging.positionsPerPage() > statePaging.pageBytes()) {
                throw new IllegalArgumentException("state page of " + statePaging.positionsPerPage() + " entries of "
                        + stateEntry + " bytes exceeds the state page of " + statePaging.pageBytes());
            }
        }
    }

    /**
     * How compressor-state positions map to pages, as {@link io.strata.kv.KindLayout} defines it for the
     * state kinds: virtual page {@code (pos / spanPositions) * pagesPerSpan + (pos % spanPositions) /
     * positionsPerPage}, entry {@code (pos % spanPositions) % positionsPerPage}.
     */
    public record StatePaging(long pageBytes, int positionsPerPage, int spanPositions, int pagesPerSpan) {
        public StatePaging {
            if (pageBytes <= 0 || positionsPerPage <= 0 || spanPositions <= 0 || pagesPerSpan <= 0) {
                throw new IllegalArgumentException("invalid state paging");
            }
        }

        /** From the KV layout: {@code pageBytes} is the bucket row, the layer's slot offset goes into the pool address. */
        public static StatePaging of(io.strata.kv.KindLayout kind, long rowBytes) {
            return new StatePaging(rowBytes, kind.positionsPerPage(), kind.spanPositions(), kind.pagesPerSpan());
        }
    }

    public static long compressWorkspaceBytes(int numTokens, int headDim) {
        NativeLibrary.require();
        return CudaNative.strata_f1_workspace_bytes(numTokens, headDim);
    }

    public static void compressInsert(CompressorStep s, Variant variant, long workspace, long stream) {
        NativeLibrary.require();
        EntryLayout l = s.layout();
        CudaRuntime.check(CudaNative.strata_f1_compress_insert(s.kv(), s.score(), s.rowStride(), s.ape(),
                s.normWeight(), s.ropeCosSin(), s.positions(), s.tokenSeq(), s.seqFirstToken(), s.seqFirstPos(),
                s.seqNumTokens(), s.stateBlockTable(), s.stateTableStride(), s.statePool(), s.statePaging().pageBytes(),
                s.statePaging().positionsPerPage(), s.statePaging().spanPositions(), s.statePaging().pagesPerSpan(),
                s.outSlot(), s.cachePool(), l.pageBytes(), l.entriesPerPage(), l.dataStride(),
                l.scaleBase(), l.scaleStride(), s.numTokens(), s.ratio(), s.headDim(), s.eps(), variant.flag(),
                workspace, stream), "F1 compress+insert (" + variant + ")");
    }

    /**
     * The reference's path from attention to {@code wo_a}, and the default: inverse RoPE (at each token's
     * query position) of channels 448..511 of every head of {@code o} bf16 [numTokens, numHeads*512], in
     * place, bf16 out, so {@code wo_a} gets bf16 input exactly as the reference feeds it.
     */
    public static void inverseRope(long o, int numTokens, int numHeads, long ropeCosSin, long stream) {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_rope_rows(o, numTokens * numHeads, numHeads, ropeCosSin, 1, stream),
                "inverse rope (bf16)");
    }

    /**
     * F2, the FP8 variant for an FP8 {@code wo_a} GEMM (not what the reference computes: it rounds the
     * output to FP8 where the reference keeps bf16): attention output {@code o} bf16 [numTokens, numHeads*512]
     * to FP8 [numTokens, numHeads*512]
     * and fp32 power-of-two scales at {@code block * scaleStrideBlock + token * scaleStrideToken};
     * ropeCosSin fp32 [numTokens, 64] at each token's (query) position.
     */
    public record OutputQuant(long o, long ropeCosSin, long outFp8, long outScales, int numTokens,
                              int numHeads, int scaleStrideBlock, int scaleStrideToken) {
    }

    public static long outputQuantWorkspaceBytes(int numTokens, int numHeads) {
        NativeLibrary.require();
        return CudaNative.strata_f2_workspace_bytes(numTokens, numHeads);
    }

    public static void inverseRopeQuant(OutputQuant s, Variant variant, long workspace, long stream) {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_f2_inv_rope_fp8_quant(s.o(), s.ropeCosSin(), s.outFp8(),
                s.outScales(), s.numTokens(), s.numHeads(), s.scaleStrideBlock(), s.scaleStrideToken(),
                variant.flag(), workspace, stream), "F2 inverse rope + fp8 quant (" + variant + ")");
    }

    /**
     * F3: q bf16 [numTokens, numHeads, 512] in place; kv bf16 [numTokens, 512] into the SWA cache at
     * slotMapping (int64, -1 = padding); ropeCosSin fp32 [numTokens, 64] at each token's position.
     */
    public record QkvStep(long q, long kv, long slotMapping, long ropeCosSin, long cachePool,
                          EntryLayout layout, int numTokens, int numHeads, float eps) {
    }

    public static long qkvWorkspaceBytes(int numTokens) {
        NativeLibrary.require();
        return CudaNative.strata_f3_workspace_bytes(numTokens);
    }

    public static void qNormRopeKvInsert(QkvStep s, Variant variant, long workspace, long stream) {
        NativeLibrary.require();
        EntryLayout l = s.layout();
        CudaRuntime.check(CudaNative.strata_f3_qnorm_rope_kv_insert(s.q(), s.kv(), s.slotMapping(),
                s.ropeCosSin(), s.cachePool(), l.pageBytes(), l.entriesPerPage(), l.dataStride(), l.scaleBase(),
                l.scaleStride(), s.numTokens(), s.numHeads(), s.eps(), variant.flag(), workspace, stream),
                "F3 qnorm+rope+kv insert (" + variant + ")");
    }

    /** Waits for all queued work; kernel faults surface here. */
    public static void synchronize() {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "cudaDeviceSynchronize");
    }
}
