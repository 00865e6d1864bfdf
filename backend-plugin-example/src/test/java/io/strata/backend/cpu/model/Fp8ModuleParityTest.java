package io.strata.backend.cpu.model;

import io.strata.backend.cpu.bench.LogitStats;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.model.checkpoint.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * dsv4-tiny-fp8 (real FP8/FP4 formats): module-level checks against the reference's recorded inputs and
 * outputs of every layer's attention, MoE and gate during the 300-token prefill of sequence 0, and the
 * statistical end-to-end check.
 */
class Fp8ModuleParityTest extends FixtureTest {
    Fp8ModuleParityTest() {
        super("dsv4-tiny-fp8");
    }

    /** Share of tokens whose output row is within {@code tol} relative (L2) of the reference. */
    static double shareWithin(float[] ours, float[] ref, int rows, int width, double tol) {
        int ok = 0;
        for (int r = 0; r < rows; r++) {
            double num = 0;
            double den = 0;
            for (int i = 0; i < width; i++) {
                double d = ours[r * width + i] - ref[r * width + i];
                num += d * d;
                den += (double) ref[r * width + i] * ref[r * width + i];
            }
            if (Math.sqrt(num / Math.max(den, 1e-30)) <= tol) {
                ok++;
            }
        }
        return (double) ok / rows;
    }

    @Test
    void attentionOfEveryLayerMatchesTheRecordedOutputs() {
        int dim = fx.config.hiddenSize();
        for (int k = 0; k < fx.config.numHiddenLayers(); k++) {
            Tensor in = fx.tensor("io.layers." + k + ".attn.in0");
            float[] x = in.toFloatArray();
            int n = in.dim(1);
            float[] out = new float[n * dim];
            List<LayerCache> caches = fx.freshCaches();
            fx.model.blocks().get(k).attention().forward(x, ChunkSpan.of(0, n), caches.get(k), out);
            double share = shareWithin(out, fx.tensor("io.layers." + k + ".attn.out0").toFloatArray(), n, dim, 2e-2);
            System.out.printf("fp8 layer %d attention: %.1f%% of tokens within 2e-2%n", k, 100 * share);
            assertThat(share).as("layer %d attention", k).isGreaterThanOrEqualTo(0.95);
        }
    }

    @Test
    void gateSelectionsAndMoeOutputsMatch() {
        int dim = fx.config.hiddenSize();
        int topk = fx.config.moe().numExpertsPerToken();
        for (int k = 0; k < fx.config.numHiddenLayers(); k++) {
            String p = "io.layers." + k + ".ffn.";
            MoeLayer moe = fx.model.blocks().get(k).moe();
            float[] gx = fx.tensor(p + "gate.in0").toFloatArray();
            int n = gx.length / dim;
            int[] ids = fx.tensor(p + "in1").toIntArray();
            MoeLayer.Routing r = moe.route(gx, n, ids);
            int[] refIds = fx.tensor(p + "gate.out1").toIntArray();
            float[] refW = fx.tensor(p + "gate.out0").toFloatArray();
            int same = 0;
            double maxWeightErr = 0;
            for (int t = 0; t < n; t++) {
                int[] a = Arrays.copyOfRange(r.experts(), t * topk, (t + 1) * topk);
                int[] b = Arrays.copyOfRange(refIds, t * topk, (t + 1) * topk);
                if (Arrays.equals(a, b)) {
                    same++;
                    for (int j = 0; j < topk; j++) {
                        maxWeightErr = Math.max(maxWeightErr, Math.abs(r.weights()[t * topk + j] - refW[t * topk + j]));
                    }
                }
            }
            double share = (double) same / n;
            System.out.printf("fp8 layer %d gate: %.1f%% identical selections, max weight error %.2e%n", k, 100 * share,
                maxWeightErr);
            assertThat(share).as("layer %d gate selections", k).isGreaterThanOrEqualTo(0.99);
            assertThat(maxWeightErr).isLessThan(1e-3);

            float[] x = fx.tensor(p + "in0").toFloatArray();
            float[] out = new float[n * dim];
            moe.forward(x, n, ids, out);
            double within = shareWithin(out, fx.tensor(p + "out0").toFloatArray(), n, dim, 2e-2);
            System.out.printf("fp8 layer %d MoE: %.1f%% of tokens within 2e-2%n", k, 100 * within);
            assertThat(within).as("layer %d MoE", k).isGreaterThanOrEqualTo(0.95);
        }
    }

    @Test
    void endToEndIsStatisticallyClose() {
        for (int seq = 0; seq < 2; seq++) {
            int[] tokens = fx.tokens(seq);
            int prompt = fx.promptLen(seq);
            float[] ours = StableParityTest.runOneShot(fx.model, tokens, prompt, fx.freshCaches());
            Tensor ref = fx.tensor("seq" + seq + ".logits");
            LogitStats s = LogitStats.of(ours, ref.toFloatArray(), ref.dim(0), fx.config.vocabSize());
            System.out.println("fp8 seq" + seq + " end to end: " + s);
            assertThat(s.median()).as(s.toString()).isLessThanOrEqualTo(0.26);
            assertThat(s.argmaxAgreement()).as(s.toString()).isGreaterThanOrEqualTo(0.50);
        }
    }
}
