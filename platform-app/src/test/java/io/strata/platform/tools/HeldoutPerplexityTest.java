package io.strata.platform.tools;

import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.LoadedModel;
import io.strata.model.ModelLoader;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginJars;
import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.platform.tokenizer.TestModels;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The perplexity cross-check on the bundled tiny model served by the CPU backend plugin: what the tool measures
 * through the engine (prompt logprobs, as the API returns them) against an independent computation — the
 * backend's executor driven directly, one prefill per chunk with the logits of every position, log-softmax here.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:heldout-perplexity-test;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=heldout-perplexity-test",
        "strata.backend=cpu"})
class HeldoutPerplexityTest {
    /** Small chunks, so a few hundred tokens make several chunks (the definition's 1024 would make one). */
    static final int CHUNK = 160;
    static final String TEXT = """
            def fibonacci(n):
                \"\"\"Return the n-th Fibonacci number.\"\"\"
                a, b = 0, 1
                for _ in range(n):
                    a, b = b, a + b
                return a


            class Counter:
                def __init__(self, start=0):
                    self.value = start

                def increment(self, step=1):
                    self.value += step
                    return self.value

                def __repr__(self):
                    return f"Counter({self.value})"


            if __name__ == "__main__":
                counter = Counter()
                for i in range(10):
                    print(i, fibonacci(i), counter.increment())
            """;

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target/heldout-perplexity-plugins"));
    }

    @Autowired
    InferenceEngine engine;
    @Autowired
    PluginHost plugins;

    @Test
    void theChunksFollowTheDefinition() {
        int[] text = IntStream.range(100, 100 + 2 * (CHUNK - 1) + 5).toArray();
        List<int[]> chunks = PerplexityDefinition.chunks(text, CHUNK);
        assertThat(chunks).hasSize(3);
        assertThat(chunks).allSatisfy(c -> assertThat(c[0]).isEqualTo(PerplexityDefinition.BOS));
        assertThat(chunks.stream().mapToInt(c -> c.length - 1).sum()).as("every text token scored once").isEqualTo(text.length);
        assertThat(chunks.get(1)[1]).isEqualTo(100 + CHUNK - 1);
        assertThat(PerplexityDefinition.chunks(new int[0])).isEmpty();
        PerplexityDefinition.Score s = PerplexityDefinition.Score.NONE.plusChunk(new double[]{Double.NaN, -1, -3});
        assertThat(s.tokens()).isEqualTo(2);
        assertThat(s.perplexity()).isCloseTo(Math.exp(2), within(1e-12));
    }

    @Test
    void theEngineAgreesWithTheExecutorDrivenDirectly() throws IOException {
        Path dir = TestModels.stable();
        List<int[]> chunks;
        try (ModelTokenizer tokenizer = ModelTokenizer.load(dir)) {
            chunks = PerplexityDefinition.chunks(tokenizer.encode(TEXT), CHUNK);
        }
        assertThat(chunks.size()).as("the text spans several chunks").isGreaterThanOrEqualTo(2);

        PerplexityDefinition.Score viaEngine = HeldoutPerplexity.score(engine, chunks);
        PerplexityDefinition.Score direct = directly(dir, chunks);

        assertThat(viaEngine.tokens()).isEqualTo(direct.tokens())
                .isEqualTo(chunks.stream().mapToLong(c -> c.length - 1).sum());
        System.out.printf("tiny fixture, %d tokens in %d chunks: engine mean NLL %.6f (ppl %.3f), executor %.6f (ppl %.3f)%n",
                viaEngine.tokens(), chunks.size(), viaEngine.meanNll(), viaEngine.perplexity(), direct.meanNll(),
                direct.perplexity());
        // same backend and kernels; the engine may split a prefill differently, so allow rounding, nothing more
        assertThat(viaEngine.meanNll()).isCloseTo(direct.meanNll(), within(1e-3 * direct.meanNll()));
        // a random model over a 1,024-token vocabulary: nowhere near certain, nowhere near impossible
        assertThat(direct.perplexity()).isBetween(2.0, 1e6);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        HeldoutPerplexity.report(new PrintStream(bytes, true, StandardCharsets.UTF_8), dir, dir.resolve("heldout.txt"),
                chunks.size(), viaEngine, viaEngine.perplexity() * 1.1, false);
        assertThat(bytes.toString(StandardCharsets.UTF_8))
                .contains("tokens scored:  " + viaEngine.tokens())
                .contains("card:           ").contains("(heldout.bf16.perplexity)")
                .contains("relative diff:  -9.09 %");
    }

    /** One fresh prefill per chunk on the CPU backend's executor, logits of every position, log-softmax here. */
    private PerplexityDefinition.Score directly(Path dir, List<int[]> chunks) {
        LoadedBackend cpu = plugins.availableBackends().stream().filter(b -> b.pluginId().equals("cpu")).findFirst()
                .orElseThrow();
        try (LoadedModel model = ModelLoader.load(dir);
             ModelExecutor executor = ((ExecutionBackend) cpu.provider()).load(model.config(), model.checkpoint(),
                     new LoadOptions("direct", CHUNK, 1, 0))) {
            KvLayout layout = KvLayout.of(KvModelShape.of("direct", model.config()), KvPrecision.DEFAULT);
            Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);
            for (var b : layout.buckets()) {
                pages.put(b.bucket(), 0);
            }
            for (KindGroup g : layout.groups()) {
                pages.merge(g.bucket(), ((int) layout.kindOf(g).pageIndex(CHUNK - 1) + 1) * chunks.size(), Integer::sum);
            }
            executor.allocateKv(layout, pages);
            PerplexityDefinition.Score score = PerplexityDefinition.Score.NONE;
            long id = 1;
            Map<PageBucket, Integer> next = new EnumMap<>(PageBucket.class);
            for (int[] chunk : chunks) {
                // a fresh sequence per chunk, on pages of its own
                BlockTable[] tables = new BlockTable[layout.groups().size()];
                for (KindGroup g : layout.groups()) {
                    int n = (int) layout.kindOf(g).pageIndex(chunk.length - 1) + 1;
                    int[] t = new int[n];
                    for (int v = 0; v < n; v++) {
                        t[v] = next.merge(g.bucket(), 1, Integer::sum) - 1;
                    }
                    tables[g.id()] = new BlockTable(0, t);
                }
                int[] rows = IntStream.range(0, chunk.length - 1).toArray();
                StepResult r = executor.execute(new StepBatch(List.of(
                        new SequenceChunk(id++, chunk, 0, tables, 0, 0, rows))));
                double[] lp = new double[chunk.length];
                lp[0] = Double.NaN;
                for (int p = 0; p < rows.length; p++) {
                    float[] logits = r.row(0, p);
                    double max = Double.NEGATIVE_INFINITY;
                    for (float x : logits) {
                        max = Math.max(max, x);
                    }
                    double sum = 0;
                    for (float x : logits) {
                        sum += Math.exp(x - max);
                    }
                    lp[p + 1] = logits[chunk[p + 1]] - max - Math.log(sum);
                }
                score = score.plusChunk(lp);
            }
            return score;
        }
    }
}
