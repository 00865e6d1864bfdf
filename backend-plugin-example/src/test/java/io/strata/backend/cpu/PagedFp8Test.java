package io.strata.backend.cpu;

import io.strata.backend.cpu.bench.LogitStats;
import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * dsv4-tiny-fp8 through the SPI on paged pools: FP8/FP4 weights, indexer top-16 over FP4 keys read back
 * from pages. Chunked prefill (64) must give the same bits as a whole-prompt prefill, and both stay within
 * the fixture's statistical criteria.
 */
class PagedFp8Test {

    @Test
    void chunkedPrefillEqualsOneShotOnTheFp8Fixture() throws Exception {
        Path dir = Path.of(System.getProperty("strata.models.dir"), "dsv4-tiny-fp8");
        ModelConfig config = ModelConfig.parse(dir.resolve("config.json"));
        try (Checkpoint ckpt = Checkpoint.open(dir);
             SafetensorsFile expected = SafetensorsFile.open(dir.resolve("expected.safetensors"));
             ModelExecutor exec = new CpuBackendProvider().load(config, ckpt, new LoadOptions("fp8", 1024, 8, 0))) {
            KvLayout layout = KvLayout.of(KvModelShape.of("fp8", config), KvPrecision.DEFAULT);
            Map<PageBucket, Integer> cap = Map.of(PageBucket.LARGE, 600, PageBucket.MIDDLE, 2500, PageBucket.SMALL, 100);
            exec.allocateKv(layout, cap);
            int[] tokens = expected.tensor("seq0.tokens").toIntArray();
            int prompt = 300;
            int decode = 60;
            float[][] runs = new float[2][];
            int[] chunks = {prompt, 64};
            for (int k = 0; k < 2; k++) {
                int[][] tables = new PageAllocator(layout, cap).tables(prompt + decode);
                int vocab = config.vocabSize();
                float[] out = new float[(decode + 1) * vocab];
                int done = 0;
                int row = 0;
                while (done < prompt + decode) {
                    int len = done < prompt ? Math.min(chunks[k], prompt - done) : 1;
                    boolean want = done + len >= prompt;
                    var r = exec.execute(new StepBatch(List.of(new SequenceChunk(k, Arrays.copyOfRange(tokens, done,
                        done + len), done, BlockTable.fromZero(tables), 0, 0, want ? new int[]{len - 1} : new int[0]))));
                    if (want && row <= decode) {
                        MemorySegment.copy(r.logits(), StepResult.FLOAT, 0, out, row * vocab, vocab);
                        row++;
                    }
                    done += len;
                }
                runs[k] = out;
            }
            assertThat(Arrays.mismatch(runs[0], runs[1])).as("first differing logit, chunked vs one-shot").isEqualTo(-1);
            float[] ref = Arrays.copyOf(expected.tensor("seq0.logits").toFloatArray(), (decode + 1) * config.vocabSize());
            LogitStats s = LogitStats.of(runs[0], ref, decode + 1, config.vocabSize());
            System.out.println("paged fp8 seq0 (first " + (decode + 1) + " rows): " + s);
            assertThat(s.median()).isLessThanOrEqualTo(0.26);
            assertThat(s.argmaxAgreement()).isGreaterThanOrEqualTo(0.5);
        }
    }
}
