package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.ops.DenseLinear;
import io.strata.backend.cpu.ops.HyperConnection;
import io.strata.backend.cpu.ops.RmsNorm;
import io.strata.backend.cpu.weights.Layouts;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.backend.cpu.weights.TensorView;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The DeepSeek-V4 trunk on the CPU: embedding → {@code hc} identical streams → blocks → HC head → logits.
 * Stateless between calls: everything a sequence remembers lives in its {@link LayerCache}s, so one
 * call can be a whole prompt, a chunk of one, or a single decode token.
 */
public final class CpuModel {
    private final ModelConfig config;
    private final int dim;
    private final int hc;
    private final int vocab;
    private final float eps;
    private final float hcEps;
    private final MemorySegment embed;
    private final List<Block> blocks = new ArrayList<>();
    private final float[] norm;
    private final float[] headFn;
    private final float[] headBase;
    private final float headScale;
    private final DenseLinear head;
    private final Scratch scratch = new Scratch(2);

    /** Receives each block's output streams ({@code n × hc × dim}) during a forward pass. */
    @FunctionalInterface
    public interface LayerObserver {
        void onBlockOutput(int layer, float[] streams, int n);
    }

    public CpuModel(ModelConfig config, TensorSource src) {
        this.config = config;
        dim = config.hiddenSize();
        hc = config.hyperConnections().mult();
        vocab = config.vocabSize();
        eps = (float) config.rmsNormEps();
        hcEps = (float) config.hyperConnections().eps();
        TensorView e = src.tensor("embed.weight").require("BF16", vocab, dim);
        embed = e.data();
        for (LayerSpec spec : config.schedule().layers()) {
            if (!spec.mtp()) {
                blocks.add(new Block(src, config, spec));
            }
        }
        norm = Linears.floats(src, "norm.weight", dim);
        headFn = Linears.floats(src, "hc_head_fn", hc * hc * dim);
        headBase = Linears.floats(src, "hc_head_base", hc);
        headScale = Linears.floats(src, "hc_head_scale", 1)[0];
        head = Linears.fp32(src, "head.weight", vocab, dim);
    }

    public ModelConfig config() {
        return config;
    }

    public List<Block> blocks() {
        return List.copyOf(blocks);
    }

    /** Weight bytes one decode token reads (embedding row, attention, router, k+1 experts, head). */
    public long weightBytesPerToken() {
        long b = head.weightBytes() + 2L * dim;
        for (Block blk : blocks) {
            b += blk.weightBytesPerToken();
        }
        return b;
    }

    /** Bytes of all trunk weights (embedding and head included). */
    public long weightBytes() {
        long b = head.weightBytes() + embed.byteSize();
        for (Block blk : blocks) {
            b += blk.weightBytes();
        }
        return b;
    }

    /** The bf16 embedding, replicated into {@code hc} streams. */
    public void embed(int[] tokens, int n, float[] h) {
        for (int t = 0; t < n; t++) {
            int id = tokens[t];
            if (id < 0 || id >= vocab) {
                throw new IllegalArgumentException("token id " + id + " outside the vocabulary [0, " + vocab + ")");
            }
            for (int d = 0; d < dim; d++) {
                float v = Float.intBitsToFloat((embed.get(Layouts.SHORT, ((long) id * dim + d) * 2) & 0xffff) << 16);
                for (int k = 0; k < hc; k++) {
                    h[(t * hc + k) * dim + d] = v;
                }
            }
        }
    }

    /**
     * Runs tokens at positions {@code p0 .. p0+n-1} of one sequence.
     *
     * @param tokens    the chunk's token ids ({@code span.length()} of them)
     * @param caches    the sequence's per-layer caches
     * @param logitRows which rows of the chunk need logits (ascending), may be empty
     * @param logits    receives {@code logitRows.length × vocab}
     */
    public void forward(int[] tokens, ChunkSpan span, IntFunction<LayerCache> caches, int[] logitRows, float[] logits,
                        LayerObserver observer) {
        forward(tokens, span.length(), List.of(new BatchSlice(0, span, caches)), logitRows, logits, observer);
    }

    /**
     * Runs a batch: the rows of several sequences (prefill chunks and decode tokens alike) go through every
     * projection, router and expert together, so each weight is read once per step; attention state is
     * per sequence.
     *
     * @param tokens    token id of every row
     * @param n         rows in the batch
     * @param slices    which rows belong to which sequence, in row order
     * @param logitRows batch rows that need logits (ascending)
     */
    public void forward(int[] tokens, int n, List<BatchSlice> slices, int[] logitRows, float[] logits,
                        LayerObserver observer) {
        float[] h = scratch.get(0, n * hc * dim);
        float[] next = scratch.get(1, n * hc * dim);
        embed(tokens, n, h);
        for (int l = 0; l < blocks.size(); l++) {
            int layer = l;
            List<AttnSlice> attn = slices.stream()
                .map(s -> new AttnSlice(s.row(), s.span(), s.caches().apply(layer))).toList();
            blocks.get(l).forward(h, n, attn, tokens, next);
            float[] tmp = h;
            h = next;
            next = tmp;
            if (observer != null) {
                observer.onBlockOutput(l, h, n);
            }
        }
        head(h, logitRows, logits);
    }

    /** HC head (sigmoid pre-weights, no Sinkhorn), final norm, fp32 logits for the chosen rows. */
    public void head(float[] h, int[] rows, float[] logits) {
        int w = hc * dim;
        float[] x = new float[rows.length * dim];
        float[] mixes = new float[hc];
        float[] pre = new float[hc];
        for (int i = 0; i < rows.length; i++) {
            int t = rows[i];
            HyperConnection.mixes(h, t * w, w, headFn, hc, eps, mixes);
            HyperConnection.headPre(mixes, headScale, headBase, hc, hcEps, pre);
            HyperConnection.pre(h, t * w, pre, hc, dim, x, i * dim);
            RmsNorm.apply(x, i * dim, norm, eps, x, i * dim, dim);
        }
        if (rows.length > 0) {
            head.forward(x, rows.length, logits);
        }
    }
}
