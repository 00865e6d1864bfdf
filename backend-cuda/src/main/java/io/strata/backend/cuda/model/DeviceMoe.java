package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.checkpoint.TensorSet;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.MoeConfig;

/**
 * One MoE sub-layer on the device, step for step the CPU backend's {@code MoeLayer}: the fp32 router
 * (sqrt-softplus, top-k of score + bias or the {@code tid2eid} row, renormalised and scaled), the routed experts
 * as grouped GEMMs over per-expert slot lists built on the device, the clamped SwiGLU, the shared expert (on the
 * step's side stream when it has one), and the sum in expert index order. {@link #forward} never synchronises or
 * allocates and its launch shapes depend only on {@code m}, so it can be captured in a CUDA graph.
 */
public final class DeviceMoe {
    private final int dim;
    private final int experts;
    private final int k;
    private final int inter;
    private final float routeScale;
    private final float limit;
    private final DeviceMatrix gate;
    private final long bias;
    private final long tid2eid;
    private final int vocab;
    private final ExpertMatrices w1;
    private final ExpertMatrices w2;
    private final ExpertMatrices w3;
    private final DeviceMatrix sw1;
    private final DeviceMatrix sw2;
    private final DeviceMatrix sw3;
    private final long bytes;

    /** Where the routing of the last {@link #route} lives in the workspace: int32 ids and fp32 weights, {@code [m, k]}. */
    public record Routing(long ids, long weights) {
    }

    private DeviceMoe(ModelConfig cfg, DeviceMatrix gate, long bias, long tid2eid, int vocab, ExpertMatrices w1,
                      ExpertMatrices w2, ExpertMatrices w3, DeviceMatrix sw1, DeviceMatrix sw2, DeviceMatrix sw3,
                      long bytes) {
        MoeConfig m = cfg.moe();
        this.dim = cfg.hiddenSize();
        this.experts = m.numRoutedExperts();
        this.k = m.numExpertsPerToken();
        this.inter = m.intermediateSize();
        this.routeScale = (float) m.routedScalingFactor();
        this.limit = (float) m.swigluLimit();
        this.gate = gate;
        this.bias = bias;
        this.tid2eid = tid2eid;
        this.vocab = vocab;
        this.w1 = w1;
        this.w2 = w2;
        this.w3 = w3;
        this.sw1 = sw1;
        this.sw2 = sw2;
        this.sw3 = sw3;
        this.bytes = bytes;
    }

    public static DeviceMoe load(WeightStore store, TensorSet ckpt, ModelConfig cfg, LayerSpec spec) {
        MoeConfig m = cfg.moe();
        int dim = cfg.hiddenSize();
        int experts = m.numRoutedExperts();
        int k = m.numExpertsPerToken();
        int inter = m.intermediateSize();
        if (experts > 1024 || k > 16 || k > experts) {
            throw new IllegalArgumentException("DeviceMoe supports up to 1024 experts and top-16, got " + experts
                + " experts, top-" + k);
        }
        if (dim % 128 != 0 || inter % 128 != 0) {
            throw new IllegalArgumentException("DeviceMoe needs hidden and moe intermediate sizes % 128 == 0, got "
                + dim + ", " + inter);
        }
        String p = spec.weightPrefix() + "ffn";
        long before = store.bytes();
        DeviceMatrix gate = DeviceMatrix.loadTensor(store, ckpt, p + ".gate.weight", experts, dim);
        long bias = 0;
        long tid2eid = 0;
        int vocab = 0;
        if (spec.hashRouted()) {
            Tensor t = ckpt.tensor(p + ".gate.tid2eid");
            if (t.rank() != 2 || t.dim(1) != k) {
                throw new IllegalArgumentException("tensor " + t.name() + ": expected [vocab, " + k + "], found " + t);
            }
            int[] ids = t.toIntArray();
            for (int id : ids) {
                if (id < 0 || id >= experts) {
                    throw new IllegalArgumentException("tensor " + t.name() + ": expert id " + id + " outside [0, "
                        + experts + ")");
                }
            }
            vocab = t.dim(0);
            tid2eid = store.upload(ids).address();
        } else {
            Tensor b = ckpt.tensor(p + ".gate.bias");
            if (b.elementCount() != experts) {
                throw new IllegalArgumentException("tensor " + b.name() + ": expected " + experts + " values, found " + b);
            }
            bias = store.upload(b.toFloatArray()).address();
        }
        ExpertMatrices w1 = ExpertMatrices.load(store, ckpt, e -> p + ".experts." + e + ".w1", experts, inter, dim);
        ExpertMatrices w2 = ExpertMatrices.load(store, ckpt, e -> p + ".experts." + e + ".w2", experts, dim, inter);
        ExpertMatrices w3 = ExpertMatrices.load(store, ckpt, e -> p + ".experts." + e + ".w3", experts, inter, dim);
        if (w1.format() == WeightFormat.F32 || w2.format() == WeightFormat.F32 || w3.format() == WeightFormat.F32) {
            throw new IllegalArgumentException(p + ".experts: F32 expert weights are not supported (BF16, FP8, FP4)");
        }
        DeviceMatrix sw1 = DeviceMatrix.load(store, ckpt, p + ".shared_experts.w1", inter, dim);
        DeviceMatrix sw2 = DeviceMatrix.load(store, ckpt, p + ".shared_experts.w2", dim, inter);
        DeviceMatrix sw3 = DeviceMatrix.load(store, ckpt, p + ".shared_experts.w3", inter, dim);
        return new DeviceMoe(cfg, gate, bias, tid2eid, vocab, w1, w2, w3, sw1, sw2, sw3, store.bytes() - before);
    }

    /** Workspace of {@link #forward} for up to {@code maxTokens} tokens. */
    public static long workspaceBytes(ModelConfig cfg, int maxTokens) {
        MoeConfig m = cfg.moe();
        return new Layout(maxTokens, cfg.hiddenSize(), m.numRoutedExperts(), m.numExpertsPerToken(),
            m.intermediateSize()).total;
    }

    /** Device bytes of this layer's weights. */
    public long bytes() {
        return bytes;
    }

    /**
     * The router alone: gate logits, scores, selection and weights, written into the workspace.
     *
     * @param x      bf16 {@code [m, dim]} (after ffn_norm), 16-byte aligned
     * @param tokens int32 {@code [m]} token ids (read by hash-routed layers only)
     */
    public Routing route(long x, long tokens, int m, long workspace, long stream) {
        Layout l = new Layout(m, dim, experts, k, inter);
        LinearKernels.run(gate, 1, x, dim, m, workspace + l.scores, experts, false, false, workspace + l.linear, stream);
        CudaRuntime.check(CudaNative.strata_moe_route(workspace + l.scores, m, experts, k, bias, tid2eid, vocab, tokens,
            routeScale, workspace + l.ids, workspace + l.weights, stream), "strata_moe_route");
        return new Routing(workspace + l.ids, workspace + l.weights);
    }

    /**
     * @param x         bf16 {@code [m, dim]} (after ffn_norm), 16-byte aligned
     * @param tokens    int32 {@code [m]} device token ids (hash routing)
     * @param out       receives bf16 {@code [m, dim]}
     * @param workspace {@link #workspaceBytes} for at least {@code m} tokens, 16-byte aligned
     */
    public void forward(long x, long tokens, int m, long out, long workspace, long stream) {
        forward(x, 0, tokens, m, out, workspace, stream, null);
    }

    /**
     * As above on the step's streams: the shared expert runs on the side stream beside the router and the
     * routed experts (it needs neither), joined before the sum; with one stream, one after the other. {@code xq}:
     * x's FP8 round trip when the norm that wrote x computed it ({@link #quantizesInput}), else 0.
     */
    void forward(long x, long xq, long tokens, int m, long out, long workspace, StepStreams s) {
        forward(x, xq, tokens, m, out, workspace, s.main(), s);
    }

    /** Whether any expert's first projection FP8-round-trips its input (then {@link #forward} can take it done). */
    boolean quantizesInput() {
        return w1.format().quantizesInput() || w3.format().quantizesInput()
            || sw1.format().quantizesInput() || sw3.format().quantizesInput();
    }

    private void forward(long x, long rounded, long tokens, int m, long out, long workspace, long stream,
                         StepStreams s) {
        if (m <= 0) {
            return;
        }
        Layout l = new Layout(m, dim, experts, k, inter);
        long ws = workspace;
        // the FP8 round trip of x is the same for every expert: done once, here unless the caller has it
        long xq = rounded != 0 ? rounded : ws + l.xq;
        if (quantizesInput() && rounded == 0) {
            CudaRuntime.check(CudaNative.strata_act_fp8_roundtrip(x, dim, m, dim, xq, dim, stream),
                "strata_act_fp8_roundtrip");
        }
        // the shared expert (weight 1) over all tokens, in buffers of its own
        long side = s != null ? s.fork() : stream;
        long sg = ws + l.sharedGate;
        long su = ws + l.sharedUp;
        LinearKernels.run(sw1, 1, input(sw1.format(), x, xq), dim, m, sg, inter, true, false,
            ws + l.sharedLinear, side);
        LinearKernels.run(sw3, 1, input(sw3.format(), x, xq), dim, m, su, inter, true, false,
            ws + l.sharedLinear, side);
        swiglu(sg, su, 0, m, sw2.format(), side);
        LinearKernels.run(sw2, 1, sg, inter, m, ws + l.shared, dim, true, false, ws + l.sharedLinear, side);
        route(x, tokens, m, ws, stream);
        int tileRows = CudaNative.strata_moe_tile_rows(m, k, experts);
        CudaRuntime.check(CudaNative.strata_moe_plan(ws + l.ids, ws + l.weights, m, k, experts, tileRows,
            ws + l.offsets, ws + l.tileOffsets, ws + l.sortedRows, ws + l.sortedWeights, ws + l.slotOfPair, stream),
            "strata_moe_plan");
        int pairs = m * k;
        long g = ws + l.gate;
        long u = ws + l.up;
        // routed experts: slot s reads token sortedRows[s]; outputs stay in slot order. w1 and w3 in one launch
        // when they are stored alike (they read the same slots)
        if (w1.pairsWith(w3)) {
            expert(w1, w3, input(w1.format(), x, xq), dim, ws + l.sortedRows, g, u, inter, pairs, tileRows, l,
                ws, stream);
        } else {
            expert(w1, null, input(w1.format(), x, xq), dim, ws + l.sortedRows, g, 0, inter, pairs, tileRows, l,
                ws, stream);
            expert(w3, null, input(w3.format(), x, xq), dim, ws + l.sortedRows, u, 0, inter, pairs, tileRows, l,
                ws, stream);
        }
        swiglu(g, u, ws + l.sortedWeights, pairs, w2.format(), stream);
        expert(w2, null, g, inter, 0, ws + l.routed, 0, dim, pairs, tileRows, l, ws, stream);
        if (s != null) {
            s.join();
        }
        CudaRuntime.check(CudaNative.strata_moe_combine(ws + l.routed, ws + l.shared, ws + l.ids, ws + l.slotOfPair, m,
            k, dim, out, stream), "strata_moe_combine");
    }

    private static long input(WeightFormat f, long x, long xq) {
        return f.quantizesInput() ? xq : x;
    }

    /** The routed slots times {@code w} into {@code y}, and in the same launch times {@code pair} into {@code yPair}. */
    private void expert(ExpertMatrices w, ExpertMatrices pair, long x, int lda, long gather, long y, long yPair,
                        int ldy, int pairs, int tileRows, Layout l, long ws, long stream) {
        DeviceMatrix d = w.first();
        if (pair == null) {
            CudaRuntime.check(CudaNative.strata_moe_expert_linear(d.fmtCode(), d.weight(), d.scale(),
                w.weightStride(), w.scaleStride(), d.rows(), d.cols(), experts, pairs, tileRows, ws + l.offsets,
                ws + l.tileOffsets, gather, x, lda, y, ldy, stream), "strata_moe_expert_linear");
        } else {
            DeviceMatrix p = pair.first();
            CudaRuntime.check(CudaNative.strata_moe_expert_linear_pair(d.fmtCode(), d.weight(), d.scale(),
                p.weight(), p.scale(), w.weightStride(), w.scaleStride(), d.rows(), d.cols(), experts, pairs,
                tileRows, ws + l.offsets, ws + l.tileOffsets, gather, x, lda, y, yPair, ldy, stream),
                "strata_moe_expert_linear_pair");
        }
    }

    /** In place over {@code g}: the clamped SwiGLU, FP8-round-tripped when the down projection quantizes its input. */
    private void swiglu(long g, long u, long rowWeights, int rows, WeightFormat down, long stream) {
        CudaRuntime.check(CudaNative.strata_moe_swiglu(g, u, rowWeights, rows, inter, limit,
            down.quantizesInput() ? 1 : 0, g, stream), "strata_moe_swiglu");
    }

    /** Byte offsets of the forward pass's buffers in the workspace (each 256-aligned). */
    private static final class Layout {
        final long scores;
        final long ids;
        final long weights;
        final long offsets;
        final long tileOffsets;
        final long sortedRows;
        final long sortedWeights;
        final long slotOfPair;
        final long xq;
        final long gate;
        final long up;
        final long routed;
        final long shared;
        final long sharedGate;
        final long sharedUp;
        final long linear;
        final long sharedLinear;
        final long total;
        private long at;

        Layout(int m, int dim, int experts, int k, int inter) {
            long pairs = (long) m * k;
            scores = take(4L * m * experts);
            ids = take(4 * pairs);
            weights = take(4 * pairs);
            offsets = take(4L * (experts + 1));
            tileOffsets = take(4L * (experts + 1));
            sortedRows = take(4 * pairs);
            sortedWeights = take(4 * pairs);
            slotOfPair = take(4 * pairs);
            xq = take(2L * m * dim);
            gate = take(2 * pairs * inter);
            up = take(2 * pairs * inter);
            routed = take(2 * pairs * dim);
            shared = take(2L * m * dim);
            sharedGate = take(2L * m * inter);
            sharedUp = take(2L * m * inter);
            linear = take(LinearKernels.workspaceBytes(m, Math.max(dim, inter)));
            sharedLinear = take(LinearKernels.workspaceBytes(m, Math.max(dim, inter)));
            total = at;
        }

        private long take(long bytes) {
            long off = at;
            at += LinearKernels.align(bytes);
            return off;
        }
    }
}
