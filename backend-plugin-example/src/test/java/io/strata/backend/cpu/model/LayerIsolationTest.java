package io.strata.backend.cpu.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * dsv4-tiny-stable, one block at a time: block k gets the reference's output of block k-1 at every
 * position (prompt and decoded tokens) and must reproduce the reference's output of block k.
 */
class LayerIsolationTest extends FixtureTest {
    LayerIsolationTest() {
        super("dsv4-tiny-stable");
    }

    @Test
    void everyBlockReproducesTheReferenceFromTheReferenceInput() {
        int seq = 1;
        int[] tokens = fx.tokens(seq);
        int n = tokens.length;
        int w = fx.config.hyperConnections().mult() * fx.config.hiddenSize();
        float[] in = new float[n * w];
        fx.model.embed(tokens, n, in);
        var caches = fx.freshCaches();
        for (int k = 0; k < fx.config.numHiddenLayers(); k++) {
            float[] ref = fx.tensor("seq" + seq + ".all.layer" + k + ".hidden").toFloatArray();
            float[] out = new float[n * w];
            fx.model.blocks().get(k).forward(in, ChunkSpan.of(0, n), tokens, caches.get(k), out);
            double[] err = new double[n];
            for (int t = 0; t < n; t++) {
                double num = 0;
                double den = 0;
                for (int i = 0; i < w; i++) {
                    double d = out[t * w + i] - ref[t * w + i];
                    num += d * d;
                    den += (double) ref[t * w + i] * ref[t * w + i];
                }
                err[t] = Math.sqrt(num / den);
            }
            double[] sorted = err.clone();
            java.util.Arrays.sort(sorted);
            System.out.printf("block %d isolated: median %.5f, p99 %.5f, max %.5f%n", k, sorted[n / 2],
                sorted[(int) (0.99 * (n - 1))], sorted[n - 1]);
            assertThat(sorted[n / 2]).as("block %d median", k).isLessThan(0.01);
            assertThat(sorted[(int) (0.99 * (n - 1))]).as("block %d p99", k).isLessThan(0.03);
            in = ref;
        }
    }
}
