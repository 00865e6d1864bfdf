package io.strata.backend.cpu.ep;

import io.strata.backend.cpu.model.ExpertFfn;
import io.strata.backend.cpu.model.MoeLayer;
import io.strata.backend.cpu.model.MoeRouter;
import io.strata.backend.cpu.weights.TensorSource;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;
import io.strata.model.format.Bf16;

import java.util.Arrays;

/**
 * One rank's MoE sub-layer under expert parallelism, with attention data-parallel: each rank brings its own
 * tokens, routes them with its copy of the gate, sends each token row once to every rank owning one of its
 * experts (dispatch), runs the routed experts it holds over the rows it received, sends each (row, expert)
 * result back (combine), and sums a token's results in expert index order before adding the shared expert.
 * That is the single-rank {@link MoeLayer}'s order exactly, so the output is bit-identical to it for any rank
 * count and any split of the tokens over the ranks.
 *
 * <p>Per step: two all-to-alls out (metadata, rows) and one back (results). A dispatch row carries
 * {@code [token, c, (expert, weight bits) × c]} in the metadata block; results return in the order the picks
 * were sent, so the sender knows where each one lands without further metadata.
 */
public final class ExpertParallelMoe {
    private final int dim;
    private final int inter;
    private final int k;
    private final MoeRouter router;
    private final ExpertPlacement placement;
    private final Collective comm;
    private final int first;
    private final ExpertFfn[] local;
    private final ExpertFfn shared;

    /**
     * @param src       this rank's tensors ({@link ShardedExpertSource}): the replicated ones and its experts
     * @param placement which rank holds which experts; its rank count is {@code comm.size()}
     */
    public ExpertParallelMoe(TensorSource src, ModelConfig cfg, LayerSpec spec, ExpertPlacement placement,
                             Collective comm) {
        var m = cfg.moe();
        if (placement.ranks() != comm.size() || placement.experts() != m.numRoutedExperts()) {
            throw new IllegalArgumentException("placement " + placement + " does not fit " + comm.size()
                + " ranks and " + m.numRoutedExperts() + " experts");
        }
        dim = cfg.hiddenSize();
        inter = m.intermediateSize();
        k = m.numExpertsPerToken();
        float limit = (float) m.swigluLimit();
        this.placement = placement;
        this.comm = comm;
        router = new MoeRouter(src, cfg, spec);
        String p = spec.weightPrefix() + "ffn";
        first = placement.first(comm.rank());
        local = new ExpertFfn[placement.count(comm.rank())];
        for (int i = 0; i < local.length; i++) {
            local[i] = ExpertFfn.load(src, p + ".experts." + (first + i), inter, dim, limit);
        }
        shared = ExpertFfn.load(src, p + ".shared_experts", inter, dim, limit);
    }

    /**
     * Every rank of the group calls this together (a rank without tokens with {@code n = 0}).
     *
     * @param x      this rank's {@code n × dim} bf16 rows (after ffn_norm)
     * @param tokens their token ids (hash routing)
     * @param out    receives {@code n × dim} bf16
     */
    public void forward(float[] x, int n, int[] tokens, float[] out) {
        int ranks = comm.size();
        MoeLayer.Routing r = n == 0 ? new MoeLayer.Routing(new int[0], new float[0]) : router.route(x, n, tokens);
        int[] ids = r.experts();

        // dispatch: a row once per destination rank; remember where each pick's result will come back
        int[] dest = new int[n * k];
        int[] slot = new int[n * k];
        int[] rowsTo = new int[ranks];
        int[] metaTo = new int[ranks];
        int[] picksTo = new int[ranks];
        for (int t = 0; t < n; t++) {
            boolean[] seen = new boolean[ranks];
            for (int j = 0; j < k; j++) {
                int d = placement.owner(ids[t * k + j]);
                dest[t * k + j] = d;
                slot[t * k + j] = picksTo[d]++;
                metaTo[d] += 2;
                if (!seen[d]) {
                    seen[d] = true;
                    rowsTo[d]++;
                    metaTo[d] += 2;
                }
            }
        }
        float[][] rows = new float[ranks][];
        int[][] meta = new int[ranks][];
        for (int d = 0; d < ranks; d++) {
            rows[d] = new float[rowsTo[d] * dim];
            meta[d] = new int[metaTo[d]];
        }
        int[] rowAt = new int[ranks];
        int[] metaAt = new int[ranks];
        for (int t = 0; t < n; t++) {
            for (int d = 0; d < ranks; d++) {
                int c = 0;
                for (int j = 0; j < k; j++) {
                    c += dest[t * k + j] == d ? 1 : 0;
                }
                if (c == 0) {
                    continue;
                }
                System.arraycopy(x, t * dim, rows[d], rowAt[d]++ * dim, dim);
                int[] md = meta[d];
                md[metaAt[d]++] = t;
                md[metaAt[d]++] = c;
                for (int j = 0; j < k; j++) {
                    if (dest[t * k + j] == d) {
                        md[metaAt[d]++] = ids[t * k + j];
                        md[metaAt[d]++] = Float.floatToRawIntBits(r.weights()[t * k + j]);
                    }
                }
            }
        }
        int[][] metaIn = comm.allToAll(meta);
        float[][] rowsIn = comm.allToAll(rows);

        float[][] results = runLocalExperts(metaIn, rowsIn);
        float[][] back = comm.allToAll(results);

        float[] ys = new float[n * dim];
        if (n > 0) {
            float[] ones = new float[n];
            Arrays.fill(ones, 1f);
            shared.forward(x, n, ones, new float[n * inter], new float[n * inter], ys);
        }
        combine(ids, k, dest, slot, back, ys, n, dim, out);
    }

    /**
     * {@code out[t] = bf16(Σ results + shared[t])}, a token's results added in expert index order (pick order
     * among equal experts) from zero, exactly the additions {@link MoeLayer} makes. Result of pick {@code (t, j)}:
     * row {@code slot[t·k+j]} of {@code back[dest[t·k+j]]}.
     */
    static void combine(int[] ids, int k, int[] dest, int[] slot, float[][] back, float[] shared, int n, int dim,
                        float[] out) {
        float[] y = new float[dim];
        Integer[] order = new Integer[k];
        for (int t = 0; t < n; t++) {
            final int base = t * k;
            for (int j = 0; j < k; j++) {
                order[j] = j;
            }
            Arrays.sort(order, (a, b) -> ids[base + a] != ids[base + b]
                ? Integer.compare(ids[base + a], ids[base + b]) : Integer.compare(a, b));
            Arrays.fill(y, 0f);
            for (int j : order) {
                float[] src = back[dest[base + j]];
                int off = slot[base + j] * dim;
                for (int d = 0; d < dim; d++) {
                    y[d] += src[off + d];
                }
            }
            for (int d = 0; d < dim; d++) {
                out[t * dim + d] = Bf16.round(y[d] + shared[t * dim + d]);
            }
        }
    }

    /** The held experts over the received rows; result {@code s} holds rank s's picks in the order it sent them. */
    private float[][] runLocalExperts(int[][] metaIn, float[][] rowsIn) {
        int ranks = metaIn.length;
        // flatten the received picks: (source rank, row in its block, expert, weight, result slot)
        int total = 0;
        for (int[] md : metaIn) {
            for (int i = 0; i < md.length; i += 2 + 2 * md[i + 1]) {
                total += md[i + 1];
            }
        }
        int[] pSrc = new int[total];
        int[] pRow = new int[total];
        int[] pExpert = new int[total];
        float[] pWeight = new float[total];
        int[] pSlot = new int[total];
        float[][] results = new float[ranks][];
        int p = 0;
        for (int s = 0; s < ranks; s++) {
            int[] md = metaIn[s];
            int row = 0;
            int picks = 0;
            for (int i = 0; i < md.length; row++) {
                int c = md[i + 1];
                for (int q = 0; q < c; q++) {
                    pSrc[p] = s;
                    pRow[p] = row;
                    pExpert[p] = md[i + 2 + 2 * q];
                    pWeight[p] = Float.intBitsToFloat(md[i + 3 + 2 * q]);
                    pSlot[p] = picks++;
                    if (!placement.holds(comm.rank(), pExpert[p])) {
                        throw new IllegalStateException("rank " + comm.rank() + " got a row for expert " + pExpert[p]
                            + " it does not hold");
                    }
                    p++;
                }
                i += 2 + 2 * c;
            }
            results[s] = new float[picks * dim];
        }
        float[] xs = new float[total * dim];
        float[] w = new float[total];
        int[] at = new int[total];
        float[] g = new float[total * inter];
        float[] u = new float[total * inter];
        float[] ys = new float[total * dim];
        for (int e = 0; e < local.length; e++) {
            int m = 0;
            for (int q = 0; q < total; q++) {
                if (pExpert[q] == first + e) {
                    System.arraycopy(rowsIn[pSrc[q]], pRow[q] * dim, xs, m * dim, dim);
                    w[m] = pWeight[q];
                    at[m++] = q;
                }
            }
            if (m == 0) {
                continue;
            }
            local[e].forward(xs, m, w, g, u, ys);
            for (int i = 0; i < m; i++) {
                int q = at[i];
                System.arraycopy(ys, i * dim, results[pSrc[q]], pSlot[q] * dim, dim);
            }
        }
        return results;
    }
}
