package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;

import java.util.List;

/**
 * The lightning indexer (query preparation, scores over the paged FP4 keys, exact top-k) and sparse
 * attention with a sink over paged FP8 entries. Arguments are device addresses; {@code strata_kernels.h}
 * gives every shape. The indexer's numbers are bit-identical to the CPU backend's
 * ({@code io.strata.backend.cpu.ops.IndexerMath}); attention agrees to about 1e-3 relative.
 */
public final class SparseKernels {
    /** Highest slot a tagged list entry can carry (30 bits). */
    public static final long MAX_SLOT = (1L << 30) - 1;

    private SparseKernels() {
    }

    /**
     * Indexer queries of a step: {@code q} bf16 [numTokens, numHeads, 128] (the {@code wq_b} output),
     * {@code w} bf16 [numTokens, numHeads] (the {@code weights_proj} output), ropeCosSin fp32 [numTokens, 64]
     * at each token's position; results: qCodes int8 [numTokens, numHeads, 128], qScales fp32
     * [numTokens, numHeads, 4], wOut fp32 [numTokens, numHeads].
     */
    public record IndexerQueries(long q, long w, long ropeCosSin, long qCodes, long qScales, long wOut,
                                 int numTokens, int numHeads, float weightScale) {
    }

    public static void prepareQueries(IndexerQueries s, long stream) {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_indexer_q_prep(s.q(), s.w(), s.ropeCosSin(), s.qCodes(), s.qScales(),
                s.wOut(), s.numTokens(), s.numHeads(), s.weightScale(), stream), "indexer query preparation");
    }

    /**
     * Scores of every visible compressed entry {@code j < (pos+1)/4} of each query: bf16 bits into
     * {@code scores[i * scoreStride + j]}. Query i has position {@code queryPos[i]} and sequence
     * {@code querySeq[i]} (int32 arrays); entry j of sequence s is at slot
     * {@code blockTable[s * tableStride + j / entriesPerPage] * entriesPerPage + j % entriesPerPage} of
     * {@code keyPool} (the layer's offset folded in).
     */
    public record IndexerScores(long qCodes, long qScales, long w, int numHeads, long queryPos, long querySeq,
                                long blockTable, int tableStride, long keyPool, EntryLayout keys, long scores,
                                long scoreStride, int numQueries, int maxCandidates) {
        public IndexerScores {
            if (numHeads <= 0 || numHeads > 128) {
                throw new IllegalArgumentException("indexer heads must be 1..128: " + numHeads);
            }
        }
    }

    public static void scores(IndexerScores s, long stream) {
        NativeLibrary.require();
        EntryLayout k = s.keys();
        CudaRuntime.check(CudaNative.strata_indexer_scores(s.qCodes(), s.qScales(), s.w(), s.numHeads(), s.queryPos(),
                s.querySeq(), s.blockTable(), s.tableStride(), s.keyPool(), k.pageBytes(), k.entriesPerPage(),
                k.dataStride(), k.scaleBase(), k.scaleStride(), s.scores(), s.scoreStride(), s.numQueries(),
                s.maxCandidates(), stream), "indexer scores");
    }

    /**
     * Where top-k also writes its selection as tagged slots of the attention lists: row i's entries
     * {@code listOffset .. listOffset + k} of {@code attnList} (int32, row stride {@code listStride}), slot
     * from {@code blockTable} as for the scores, tagged with attention source {@code tag}.
     */
    public record SelectionTarget(long attnList, long listStride, int listOffset, int tag, long querySeq,
                                  long blockTable, int tableStride, int entriesPerPage) {
        public static final SelectionTarget NONE = new SelectionTarget(0, 0, 0, 0, 0, 0, 0, 1);
    }

    /**
     * Top-k: per query the {@code min(k, (pos+1)/4)} highest scores, lower index first among equal scores, as
     * candidate indices in {@code outIdx} int32 [numQueries, k] (unordered, -1 past the selection).
     * {@code scoreStride} must be a multiple of 8, {@code maxCandidates} at most 262,144.
     */
    public record TopK(long scores, long scoreStride, long queryPos, int k, long outIdx, int numQueries,
                       int maxCandidates, SelectionTarget target) {
        public TopK {
            if (scoreStride % 8 != 0) {
                throw new IllegalArgumentException("score stride must be a multiple of 8: " + scoreStride);
            }
        }
    }

    public static void topK(TopK s, long stream) {
        NativeLibrary.require();
        SelectionTarget t = s.target();
        CudaRuntime.check(CudaNative.strata_indexer_topk(s.scores(), s.scoreStride(), s.queryPos(), s.k(), s.outIdx(),
                t.querySeq(), t.blockTable(), t.tableStride(), t.entriesPerPage(), t.attnList(), t.listStride(),
                t.listOffset(), t.tag(), s.numQueries(), s.maxCandidates(), stream), "indexer top-k");
    }

    /** One KV source of attention: a pool of 584-byte FP8 entries (data 16-byte aligned). */
    public record Source(long pool, EntryLayout layout) {
    }

    /**
     * Sparse attention: q bf16 [numRows, numHeads, 512]; row r attends the first {@code listLen[r]} entries
     * of {@code lists[r * listStride ..]} ({@link #tagged} slots or -1); sink fp32 [numHeads]; out bf16
     * [numRows, numHeads, 512] (before inverse RoPE).
     */
    public record Attention(long q, int numHeads, long lists, long listLen, long listStride, long sink,
                            float scale, List<Source> sources, long out, int numRows) {
        public Attention {
            sources = List.copyOf(sources);
            if (sources.isEmpty() || sources.size() > 3) {
                throw new IllegalArgumentException("attention takes 1 to 3 KV sources, not " + sources.size());
            }
        }
    }

    /** A list entry: source index (0..2) in the top two bits, the slot below. */
    public static int tagged(int source, long slot) {
        if (source < 0 || source > 2 || slot < 0 || slot > MAX_SLOT) {
            throw new IllegalArgumentException("no list entry for source " + source + ", slot " + slot);
        }
        return (int) (((long) source << 30) | slot);
    }

    /** Workspace {@link #attend} needs for this shape (0 when it runs one CTA per row). */
    public static long attentionWorkspaceBytes(int numRows, int numHeads, long listStride) {
        NativeLibrary.require();
        return CudaNative.strata_sparse_attn_workspace_bytes(numRows, numHeads, listStride);
    }

    /** {@code workspace} of {@link #attentionWorkspaceBytes} bytes, or 0 to keep one CTA per row. */
    public static void attend(Attention s, long workspace, long stream) {
        NativeLibrary.require();
        long[] src = new long[6 * s.sources().size()];
        for (int i = 0; i < s.sources().size(); i++) {
            Source so = s.sources().get(i);
            EntryLayout l = so.layout();
            src[6 * i] = so.pool();
            src[6 * i + 1] = l.pageBytes();
            src[6 * i + 2] = l.entriesPerPage();
            src[6 * i + 3] = l.dataStride();
            src[6 * i + 4] = l.scaleBase();
            src[6 * i + 5] = l.scaleStride();
        }
        CudaRuntime.check(CudaNative.strata_sparse_attn(s.q(), s.numHeads(), s.lists(), s.listLen(), s.listStride(),
                s.sink(), s.scale(), src, src.length / 6, s.out(), s.numRows(), workspace, stream), "sparse attention");
    }
}
