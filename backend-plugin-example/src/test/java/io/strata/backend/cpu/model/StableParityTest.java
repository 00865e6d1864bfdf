package io.strata.backend.cpu.model;

import io.strata.backend.cpu.bench.LogitStats;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.model.checkpoint.Tensor;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** End-to-end parity on dsv4-tiny-stable: one-shot prefill then teacher-forced decode. */
class StableParityTest extends FixtureTest {
    StableParityTest() {
        super("dsv4-tiny-stable");
    }

    /** Prefill tokens[0:P] at once, then one token at a time; logits as the fixture's rows. */
    static float[] runOneShot(CpuModel model, int[] tokens, int prompt, List<LayerCache> caches) {
        int vocab = model.config().vocabSize();
        int rows = tokens.length - prompt + 1;
        float[] logits = new float[rows * vocab];
        float[] row = new float[vocab];
        model.forward(tokens, ChunkSpan.of(0, prompt), caches::get, new int[]{prompt - 1}, row, null);
        System.arraycopy(row, 0, logits, 0, vocab);
        for (int j = 1; j < rows; j++) {
            int pos = prompt - 1 + j;
            model.forward(new int[]{tokens[pos]}, ChunkSpan.of(pos, 1), caches::get, new int[]{0}, row, null);
            System.arraycopy(row, 0, logits, j * vocab, vocab);
        }
        return logits;
    }

    @Test
    void oneShotPrefillThenDecodeMatchesTheReference() {
        for (int seq = 0; seq < 2; seq++) {
            int[] tokens = fx.tokens(seq);
            int prompt = fx.promptLen(seq);
            float[] ours = runOneShot(fx.model, tokens, prompt, fx.freshCaches());
            Tensor ref = fx.tensor("seq" + seq + ".logits");
            LogitStats stats = LogitStats.of(ours, ref.toFloatArray(), ref.dim(0), fx.config.vocabSize());
            System.out.println("stable seq" + seq + " one-shot: " + stats);
            assertThat(stats.meetsStableCriteria()).as(stats.toString()).isTrue();
        }
    }
}
