package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.EntryLayout;
import io.strata.backend.cuda.FusedKernels;
import io.strata.backend.cuda.SparseKernels;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.CacheKind;
import io.strata.model.checkpoint.TensorSet;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * The DeepSeek-V4 trunk on one GPU, step by step as the CPU backend's {@code CpuModel} runs it: embedding
 * into {@code hc} streams, every block (HC-pre, attention, HC-post, HC-pre, MoE, HC-post), the HC head,
 * the final norm and the logits of the rows the engine asked for. All rows of a step go through each
 * kernel together; everything a request remembers lives in the KV pools.
 */
final class DeviceModel implements AutoCloseable {
    private static final int MAIN_ENTRY = 584;
    private static final int MAIN_DATA = 576;
    private static final int HEAD_ROWS = 256;

    private final ModelConfig config;
    private final int dim;
    private final int hc;
    private final int vocab;
    private final int heads;
    private final int headDim;
    private final int qLora;
    private final int window;
    private final float eps;
    private final float hcEps;
    private final long embed;
    private final long norm;
    private final long headFn;
    private final long headBase;
    private final long headScale;
    private final DeviceMatrix head;
    private final List<DeviceLayer> layers = new ArrayList<>();
    private final List<DeviceRopeTable> ropes = new ArrayList<>();

    DeviceModel(ModelConfig config, TensorSet src, WeightStore store) {
        this.config = config;
        var a = config.attention();
        dim = config.hiddenSize();
        hc = config.hyperConnections().mult();
        vocab = config.vocabSize();
        heads = a.numHeads();
        headDim = a.headDim();
        qLora = a.qLoraRank();
        window = a.slidingWindow();
        eps = (float) config.rmsNormEps();
        hcEps = (float) config.hyperConnections().eps();
        var e = src.tensor("embed.weight");
        if (!e.dtype().name().equals("BF16") || !e.hasShape(vocab, dim)) {
            throw new IllegalArgumentException("tensor embed.weight: expected BF16 [" + vocab + ", " + dim + "], found "
                + e.dtype() + " " + java.util.Arrays.toString(e.shape()));
        }
        embed = store.upload(e).address();
        norm = DeviceLayer.floats(store, src, "norm.weight", dim);
        headFn = DeviceLayer.floats(store, src, "hc_head_fn", (long) hc * hc * dim);
        headBase = DeviceLayer.floats(store, src, "hc_head_base", hc);
        headScale = DeviceLayer.floats(store, src, "hc_head_scale", 1);
        head = DeviceMatrix.loadTensor(store, src, "head.weight", vocab, dim);
        for (LayerSpec spec : config.schedule().layers()) {
            if (!spec.mtp()) {
                layers.add(new DeviceLayer(store, src, config, spec));
                if (ropes.stream().noneMatch(t -> t.config().equals(spec.rope()))) {
                    ropes.add(new DeviceRopeTable(spec.rope()));
                }
            }
        }
    }

    ModelConfig config() {
        return config;
    }

    /** One device table of RoPE rows per rotary configuration the layers use. */
    List<DeviceRopeTable> ropes() {
        return List.copyOf(ropes);
    }

    int window() {
        return window;
    }

    /**
     * Device bytes of activations for a step of {@code tokens} rows whose lists hold up to {@code listEntries}
     * entries per row (the KV budget leaves this much free).
     */
    long activationBytes(int tokens, int listEntries) {
        long t = tokens;
        long b = 3 * t * hc * dim * 2 + 2 * t * dim * 2 + t * (2 * hc + hc * hc) * 4;
        b += t * dim * 2 + t * qLora * 2;  // the FP8 round trips of x and of the q latent
        b += t * qLora * 2 + 2 * t * heads * headDim * 2 + t * headDim * 2 + t * MAIN_ENTRY;
        b += t * (qLora + headDim) * 2;  // the stacked q latent and K=V row, before their norms
        var at = config.attention();
        b += t * at.oGroups() * at.oLoraRank() * 2 + 2 * t * 2 * headDim * 4;
        var ix = config.indexer();
        b += t * ix.numHeads() * ix.headDim() * 3 + t * ix.numHeads() * 24 + 2 * t * 2 * ix.headDim() * 4;
        b += t * listEntries * 6L + t * ix.topk() * 4L;
        b += LinearKernels.workspaceBytes(tokens, Math.max(dim, heads * headDim));
        b += DeviceMoe.workspaceBytes(config, tokens);
        b += (long) HEAD_ROWS * vocab * 4 + (long) HEAD_ROWS * dim * 2;
        return b;
    }

    /**
     * Queues a step; what it returns of its logits of {@code plan.logitRows} ({@code vocab} fp32 each: whole rows, or
     * argmax tokens) is queued through {@code ret}, and is on the host once the main stream has synchronised.
     */
    void forward(StepPlan plan, DeviceKvCache kv, Workspace ws, LogitReturn ret, StepStreams s) {
        long h = trunk(plan, kv, ws, s);
        int rows = plan.logitRows.length;
        for (int r0 = 0; r0 < rows; r0 += HEAD_ROWS) {
            int n = Math.min(HEAD_ROWS, rows - r0);
            // the next head pass reuses the device buffer: stream order puts it after this pass's copies
            ret.queue(headLogits(plan, h, r0, n, ws, s), r0, n, s.main());
        }
    }

    /** Rows of logits one {@link #headLogits} call computes at most. */
    static int headRows() {
        return HEAD_ROWS;
    }

    /**
     * Every layer over all rows of the step, issued on {@code s} without synchronising or allocating once the
     * workspace has grown to the step's shape (so a decode step can be captured in a graph); returns the
     * device address of the final hyper-connection streams, bf16 [T, hc, dim].
     */
    long trunk(StepPlan plan, DeviceKvCache kv, Workspace ws, StepStreams s) {
        long stream = s.main();
        int T = plan.tokens;
        long streams = (long) T * hc * dim * 2;
        long h = ws.get("h", streams);
        long next = ws.get("next", streams);
        long mid = ws.get("mid", streams);
        long x = ws.get("x", (long) T * dim * 2);
        // x's FP8 round trip, written by the pre that writes x, for the sub-layers whose FP8/FP4 linears read x
        long xq = ws.get("xq", (long) T * dim * 2);
        long y = ws.get("y", (long) T * dim * 2);
        long mix = ws.get("mix", (long) T * (2 * hc + hc * hc) * 4);
        long partials = ws.get("hcPartials", CudaNative.strata_hc_partials_bytes(T, hc, dim));
        int iters = config.hyperConnections().sinkhornIters();
        long moeWs = ws.get("moe", DeviceMoe.workspaceBytes(config, T));
        s.mark(StepProfile.Component.EMBEDDING);
        check(CudaNative.strata_embed(plan.tokenIds, embed, h, T, dim, hc, stream), "embedding");
        // every post but the last is computed by the next sub-layer's pre (strata_hc_post_pre): one kernel less
        s.mark(StepProfile.Component.HYPER_CONNECTIONS);
        DeviceLayer first = layers.getFirst();
        // with two streams each pre leaves its Sinkhorn iterations (the post weights and the combination matrix, read
        // only by the next pre's post) to a kernel on the side stream, which the sub-layer joins before it ends
        int later = s.concurrent() ? 1 : 0;
        check(CudaNative.strata_hc_pre(h, first.hcAttn.fn(), first.hcAttn.base(), first.hcAttn.scale(),
            first.attnNorm, x, first.attentionQuantizesInput() ? xq : 0, mix, partials, T, hc, dim, iters, hcEps, eps,
            later, stream), "hc pre (attention)");
        sinkhornBeside(first.hcAttn, mix, T, s);
        for (int l = 0; l < layers.size(); l++) {
            DeviceLayer layer = layers.get(l);
            attention(l, layer, plan, kv, ws, x, layer.attentionQuantizesInput() ? xq : 0, y, s);
            s.mark(StepProfile.Component.HYPER_CONNECTIONS);
            long moeXq = layer.moe.quantizesInput() ? xq : 0;
            check(CudaNative.strata_hc_post_pre(y, h, mid, layer.hcFfn.fn(), layer.hcFfn.base(),
                layer.hcFfn.scale(), layer.ffnNorm, x, moeXq, mix, partials, T, hc, dim, iters, hcEps, eps, later,
                stream), "hc post (attention) + pre (ffn)");
            sinkhornBeside(layer.hcFfn, mix, T, s);
            s.mark(StepProfile.Component.MOE);
            layer.moe.forward(x, moeXq, plan.tokenIds, T, y, moeWs, s);
            s.mark(StepProfile.Component.HYPER_CONNECTIONS);
            if (l + 1 < layers.size()) {
                DeviceLayer after = layers.get(l + 1);
                check(CudaNative.strata_hc_post_pre(y, mid, next, after.hcAttn.fn(), after.hcAttn.base(),
                    after.hcAttn.scale(), after.attnNorm, x, after.attentionQuantizesInput() ? xq : 0, mix, partials, T,
                    hc, dim, iters, hcEps, eps, later, stream), "hc post (ffn) + pre (attention)");
                sinkhornBeside(after.hcAttn, mix, T, s);
            } else {
                check(CudaNative.strata_hc_post(y, mid, mix, next, T, hc, dim, stream), "hc post (ffn)");
            }
            long tmp = h;
            h = next;
            next = tmp;
        }
        return h;
    }

    /**
     * With two streams, the Sinkhorn half of the pre just issued, on the side stream: the sub-layer after it joins the
     * side stream (before attention, before the MoE's sum) and so before the next pre's post reads the mix.
     */
    private void sinkhornBeside(DeviceLayer.Mix m, long mix, int tokens, StepStreams s) {
        if (s.concurrent()) {
            check(CudaNative.strata_hc_sinkhorn(mix, m.base(), m.scale(), tokens, hc,
                config.hyperConnections().sinkhornIters(), hcEps, s.fork()), "hc Sinkhorn");
        }
    }

    /**
     * The HC head and final norm of logit rows {@code [r0, r0 + n)} ({@code n <= }{@link #headRows()}), then
     * their fp32 logits; returns the device address of the logits, {@code [n, vocab]}.
     */
    long headLogits(StepPlan plan, long h, int r0, int n, Workspace ws, StepStreams s) {
        long stream = s.main();
        int rows = Math.min(plan.logitRows.length, HEAD_ROWS);
        long xr = ws.get("headX", (long) rows * dim * 2);
        long logits = ws.get("logits", (long) rows * vocab * 4);
        long lin = ws.get("linear", LinearKernels.workspaceBytes(rows, dim));
        long partials = ws.get("hcPartials", CudaNative.strata_hc_partials_bytes(rows, hc, dim));
        s.mark(StepProfile.Component.HEAD);
        check(CudaNative.strata_hc_head(h, plan.logitRowsDevice + 4L * r0, headFn, headBase, headScale, norm, xr, partials, n,
            hc, dim, hcEps, eps, stream), "hc head");
        LinearKernels.linear(head, xr, dim, n, logits, vocab, false, lin, stream);
        s.mark(StepProfile.Component.HEAD);
        return logits;
    }

    /** One attention sub-layer over all rows of the step: x bf16 [T, dim] in, y bf16 [T, dim] out. */
    void attention(int l, StepPlan plan, DeviceKvCache kv, Workspace ws, long x, long y, StepStreams s) {
        attention(l, layers.get(l), plan, kv, ws, x, 0, y, s);
    }

    /**
     * On C4A layers the indexer path (its compressor, queries, scores, top-k) runs on the side stream from
     * the q latent on, beside the main KV's compression and window insert; on C128A layers the attention lists
     * and the compressor run beside the query path and the window insert, on window-only layers the lists. Both
     * streams join before attention reads the lists and the compressed entries. Every buffer either stream
     * touches is taken from the workspace before the fork, and the side stream has its own GEMM scratch. {@code xq}:
     * x's FP8 round trip, computed by the pre that wrote x, or 0 (the low-rank projections round-trip x themselves).
     */
    private void attention(int l, DeviceLayer layer, StepPlan plan, DeviceKvCache kv, Workspace ws, long x, long xq,
                           long y, StepStreams s) {
        long stream = s.main();
        int T = plan.tokens;
        int qw = heads * headDim;
        var at = config.attention();
        long lin = ws.get("linear", LinearKernels.workspaceBytes(T, Math.max(Math.max(dim, qw), qLora)));
        long sideLin = s.concurrent() ? ws.get("sideLinear", LinearKernels.workspaceBytes(T, Math.max(dim, qLora))) : lin;
        StepPlan.Rope rope = plan.rope(layer.spec.rope());
        int ratio = layer.kind.compressRatio();
        CacheKind compKind = ratio == 4 ? CacheKind.C4A_KV : ratio == 128 ? CacheKind.C128A_KV : null;
        // attention lists: window, then all compressed entries (ratio 128) or the indexer's picks (ratio 4)
        int topk = config.indexer().topk();
        int listStride = window + (ratio == 4 ? topk : ratio == 128 ? Math.max(plan.maxVisible128, 1) : 0);
        long lists = ws.get("lists", (long) T * listStride * 4);
        long listLen = ws.get("listLen", (long) T * 4);
        var swaGroup = kv.group(CacheKind.SWA_KV, l);
        var swaTable = plan.table(swaGroup);
        StepPlan.Table compTable = compKind != null ? plan.table(kv.group(compKind, l)) : swaTable;
        // The lists read only the step's plan, so they go beside the main chain wherever the side stream has less
        // to do than the main one: C128A (the compressor) and window-only layers; a C4A layer's side stream carries
        // the whole indexer, and its lists stay on the main stream
        if (ratio != 4) {
            long side = s.fork();
            attentionLists(plan, kv, swaTable, compTable, ratio, lists, listLen, listStride, side);
            if (ratio == 128) {
                compress(l, layer.compressor, compKind, CacheKind.C128_STATE, rope.ratio128(), plan, kv, ws, x, sideLin,
                    "c", side);
            }
        }
        // queries: low rank, norm, up-projection; F3 below applies the head norm and RoPE in place
        s.mark(StepProfile.Component.ATTENTION_GEMMS);
        long qr = ws.get("qr", (long) T * qLora * 2);
        // the shared K=V row of each token, staged as a cache entry in row order, then kept where mapped
        long kvRow = ws.get("kv", (long) T * headDim * 2);
        // the q latent's FP8 round trip, computed by its norm, for the up-projections that quantize it
        long qrq = layer.latentQuantized() ? ws.get("qrq", (long) T * qLora * 2) : 0;
        if (layer.wqkvA != null) {
            // q latent and K=V row from one GEMM over the stacked weights; each norm reads its columns
            int width = qLora + headDim;
            long latent = ws.get("qkvLatent", (long) T * width * 2);
            LinearKernels.linearRounded(layer.wqkvA, x, xq, dim, T, latent, width, true, lin, stream);
            check(CudaNative.strata_rms_norm_pair(latent, width, layer.qNorm, qr, qLora, qrq, qLora,
                latent + 2L * qLora, width, layer.kvNorm, kvRow, headDim, headDim, T, eps, stream), "q and kv norms");
        } else {
            LinearKernels.linearRounded(layer.wqA, x, xq, dim, T, qr, qLora, true, lin, stream);
            check(CudaNative.strata_rms_norm(qr, qLora, layer.qNorm, qr, qLora, qrq, T, qLora, eps, stream), "q norm");
        }
        if (layer.indexer != null) {
            s.mark(StepProfile.Component.INDEXER);
            select(l, layer, plan, kv, ws, x, qr, qrq, sideLin, rope, lists, listStride, s.fork());
            s.mark(StepProfile.Component.ATTENTION_GEMMS);
        }
        long q = ws.get("q", (long) T * qw * 2);
        LinearKernels.linearRounded(layer.wqB, qr, qrq, qLora, T, q, qw, true, lin, stream);
        if (layer.wqkvA == null) {
            LinearKernels.linearRounded(layer.wkv, x, xq, dim, T, kvRow, headDim, true, lin, stream);
            check(CudaNative.strata_rms_norm(kvRow, headDim, layer.kvNorm, kvRow, headDim, 0, T, headDim, eps, stream),
                "kv norm");
        }
        long staging = ws.get("staging", (long) T * MAIN_ENTRY);
        s.mark(StepProfile.Component.KV_INSERT);
        // split like FlashMLA's page (all values, then all scales) so every entry's values stay 16-byte aligned
        EntryLayout stagingLayout = EntryLayout.mainSplit(T, (long) T * MAIN_ENTRY);
        FusedKernels.qNormRopeKvInsert(new FusedKernels.QkvStep(q, kvRow, plan.stagingSlots, rope.query(), staging,
            stagingLayout, T, heads, eps), FusedKernels.Variant.FUSED, 0, stream);
        EntryLayout swa = kv.entries(CacheKind.SWA_KV);
        long swaPool = kv.pool(CacheKind.SWA_KV, l);
        check(CudaNative.strata_copy_entries(staging, stagingLayout.pageBytes(), stagingLayout.entriesPerPage(),
            stagingLayout.dataStride(), stagingLayout.scaleBase(), stagingLayout.scaleStride(), MAIN_DATA, 8,
            plan.writeSlots(swaGroup), swaPool,
            swa.pageBytes(), swa.entriesPerPage(), swa.dataStride(), swa.scaleBase(), swa.scaleStride(), T, stream),
            "window insert");
        // the main KV's compressed entries this step completes (C128A: already on the side stream)
        if (ratio == 4) {
            s.mark(StepProfile.Component.COMPRESSORS);
            compress(l, layer.compressor, compKind, CacheKind.C4_STATE, rope.ratio4(), plan, kv, ws, x, lin, "c", stream);
        }
        s.mark(StepProfile.Component.ATTENTION);
        if (ratio == 4) {
            attentionLists(plan, kv, swaTable, compTable, ratio, lists, listLen, listStride, stream);
        }
        s.join();
        long o = ws.get("o", (long) T * qw * 2);
        long compPool = compKind != null ? kv.pool(compKind, l) : swaPool;
        EntryLayout compLayout = compKind != null ? kv.entries(compKind) : swa;
        long attnWs = SparseKernels.attentionWorkspaceBytes(T, heads, listStride);
        SparseKernels.attend(new SparseKernels.Attention(q, heads, lists, listLen, listStride, layer.sink,
                (float) (1.0 / Math.sqrt(headDim)), List.of(new SparseKernels.Source(swaPool, swa),
                new SparseKernels.Source(compPool, compLayout), new SparseKernels.Source(staging, stagingLayout)), o, T),
            attnWs > 0 ? ws.get("attn", attnWs) : 0, stream);
        FusedKernels.inverseRope(o, T, heads, rope.query(), stream);
        s.mark(StepProfile.Component.ATTENTION_GEMMS);
        int oRank = at.oGroups() * at.oLoraRank();
        long oa = ws.get("oa", (long) T * oRank * 2);
        LinearKernels.grouped(layer.woA, at.oGroups(), o, qw, T, oa, oRank, lin, stream);
        LinearKernels.linear(layer.woB, oa, oRank, T, y, dim, true, lin, stream);
    }

    /**
     * Each row's attention list: its window's entries, then all compressed entries it sees (ratio 128) or room for
     * the indexer's picks (ratio 4), which the top-k writes.
     */
    private void attentionLists(StepPlan plan, DeviceKvCache kv, StepPlan.Table swaTable, StepPlan.Table compTable,
                                int ratio, long lists, long listLen, int listStride, long stream) {
        var swaKind = kv.kind(CacheKind.SWA_KV);
        check(CudaNative.strata_attn_lists(plan.positions, plan.tokenSeq, plan.seqFirstToken, plan.seqFirstPos,
            plan.windowFloor, swaTable.address(), swaTable.stride(), swaKind.positionsPerPage(), swaKind.spanPositions(),
            swaKind.pagesPerSpan(), compTable.address(), compTable.stride(), ratio, config.indexer().topk(), window,
            lists, listLen, listStride, plan.tokens, stream), "attention lists");
    }

    /** Compressor projections (fp32) and F1: pooled entries into the compressed cache, state into its window. */
    private void compress(int l, DeviceLayer.Compressor c, CacheKind entryKind, CacheKind stateKind, long ropeRows,
                          StepPlan plan, DeviceKvCache kv, Workspace ws, long x, long lin, String use, long stream) {
        int T = plan.tokens;
        int width = c.width();
        // a token's kv row then its score row, 2·width apart
        long ckv = ws.get(use + "kvScore", (long) T * 2 * width * 4);
        long csc = ckv + (long) width * 4;
        long column = 0;
        for (DeviceMatrix p : c.projections()) {
            LinearKernels.linear(p, x, dim, T, ckv + column * 4, 2 * width, false, lin, stream);
            column += p.rows();
        }
        var stateGroup = kv.group(stateKind, l);
        var stateTable = plan.table(stateGroup);
        FusedKernels.compressInsert(new FusedKernels.CompressorStep(ckv, csc, 2L * width, c.ape(), c.norm(), ropeRows,
            plan.positions, plan.tokenSeq, plan.seqFirstToken, plan.seqFirstPos, plan.seqNumTokens,
            stateTable.address(), stateTable.stride(), kv.pool(stateKind, l), kv.statePaging(stateKind),
            plan.writeSlots(kv.group(entryKind, l)), kv.pool(entryKind, l), kv.entries(entryKind), T, c.ratio(),
            c.headDim(), eps), FusedKernels.Variant.FUSED, 0, stream);
    }

    /** The lightning indexer: its compressor, query prep, scores over all visible keys, top-k into the lists. */
    private void select(int l, DeviceLayer layer, StepPlan plan, DeviceKvCache kv, Workspace ws, long x, long qr,
                        long qrq, long lin, StepPlan.Rope rope, long lists, int listStride, long stream) {
        int T = plan.tokens;
        var ix = config.indexer();
        int ih = ix.numHeads();
        int id = ix.headDim();
        DeviceLayer.Indexer idx = layer.indexer;
        compress(l, idx.compressor(), CacheKind.C4_INDEXER_K, CacheKind.C4_INDEXER_STATE, rope.ratio4(), plan, kv, ws,
            x, lin, "ic", stream);
        long iq = ws.get("iq", (long) T * ih * id * 2);
        long iw = ws.get("iw", (long) T * ih * 2);
        LinearKernels.linearRounded(idx.wqB(), qr, qrq, qLora, T, iq, ih * id, true, lin, stream);
        LinearKernels.linear(idx.weightsProj(), x, dim, T, iw, ih, true, lin, stream);
        long codes = ws.get("iqCodes", (long) T * ih * id);
        long scales = ws.get("iqScales", (long) T * ih * 4 * 4);
        long wOut = ws.get("iwOut", (long) T * ih * 4);
        float weightScale = (float) (Math.pow(id, -0.5) * Math.pow(ih, -0.5));
        SparseKernels.prepareQueries(new SparseKernels.IndexerQueries(iq, iw, rope.query(), codes, scales, wOut, T, ih,
            weightScale), stream);
        int candidates = Math.max(plan.maxCandidates4, 1);
        long scoreStride = (candidates + 7) / 8 * 8L;
        long scores = ws.get("scores", T * scoreStride * 2);
        var keyGroup = kv.group(CacheKind.C4_INDEXER_K, l);
        var keyTable = plan.table(keyGroup);
        SparseKernels.scores(new SparseKernels.IndexerScores(codes, scales, wOut, ih, plan.positions, plan.tokenSeq,
            keyTable.address(), keyTable.stride(), kv.pool(CacheKind.C4_INDEXER_K, l), kv.entries(CacheKind.C4_INDEXER_K),
            scores, scoreStride, T, candidates), stream);
        var entryTable = plan.table(kv.group(CacheKind.C4A_KV, l));
        long topIdx = ws.get("topIdx", (long) T * ix.topk() * 4);
        SparseKernels.topK(new SparseKernels.TopK(scores, scoreStride, plan.positions, ix.topk(), topIdx, T, candidates,
            new SparseKernels.SelectionTarget(lists, listStride, window, 1, plan.tokenSeq, entryTable.address(),
                entryTable.stride(), kv.kind(CacheKind.C4A_KV).entriesPerPage())), stream);
    }

    private static void check(int code, String what) {
        CudaRuntime.check(code, what);
    }

    /** Frees what the model allocated besides its weights (those are the store's): the RoPE tables. */
    @Override
    public void close() {
        ropes.forEach(DeviceRopeTable::close);
    }
}
