package io.strata.platform.workers;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.LoadedModel;
import io.strata.model.ModelLoader;
import io.strata.platform.plugins.PluginJars;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The same schedule through a worker process ({@link RemoteExecutor}, real process, real socket) and through
 * the CPU backend loaded in this JVM from the same plugin jar gives bit-identical logits: chunked prefill of two
 * requests, batches mixing prefill and decode, a request resuming after a shared prefix.
 */
class RemoteExecutorParityTest {
    static final Path MODEL = Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
    static final Map<PageBucket, Integer> PAGES = Map.of(PageBucket.LARGE, 600, PageBucket.MIDDLE, 2500, PageBucket.SMALL, 100);

    static LoadedModel model;
    static PluginBackend plugin;
    static ModelExecutor local;
    static RemoteExecutor remote;
    static KvLayout layout;
    static final List<WorkerState> states = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        Path jar = PluginJars.builtJar("backend-plugin-example");
        model = ModelLoader.load(MODEL);
        plugin = PluginBackend.load(jar, "cpu");
        local = plugin.backend().load(model.config(), model.checkpoint(), new LoadOptions("tiny", 1024, 8, 0));
        remote = RemoteExecutor.start(new WorkerLaunch("worker-parity", jar, "cpu", MODEL, "tiny", 1024, 8, Map.of(), List.of()),
                model.config(), WorkerProperties.off(), new SimpleMeterRegistry(), states::add);
        layout = KvLayout.of(KvModelShape.of("tiny", model.config()), KvPrecision.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (remote != null) {
            remote.close();
        }
        if (local != null) {
            local.close();
        }
        if (plugin != null) {
            plugin.close();
        }
        if (model != null) {
            model.close();
        }
    }

    /** Fresh pages in order, per bucket, for positions {@code [0, end)} of every kind group. */
    static int[][] tables(int end, Map<PageBucket, Integer> next) {
        int[][] t = new int[layout.groups().size()][];
        for (KindGroup g : layout.groups()) {
            int pages = (int) layout.kindOf(g).pageIndex(end - 1) + 1;
            t[g.id()] = new int[pages];
            for (int v = 0; v < pages; v++) {
                t[g.id()][v] = next.merge(g.bucket(), 1, Integer::sum) - 1;
            }
        }
        return t;
    }

    static int[] tokens(int n, int seed) {
        int vocab = model.config().vocabSize();
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = (i * 37 + seed * 101 + 11) % vocab;
        }
        return t;
    }

    /** Two requests: 300-token prompt chunked by 100, 180-token prompt in one chunk joining at step 2, then decode. */
    static List<StepBatch> schedule() {
        Map<PageBucket, Integer> next = new EnumMap<>(PageBucket.class);
        int[] a = tokens(320, 1);
        int[] b = tokens(200, 2);
        BlockTable[] ta = BlockTable.fromZero(tables(a.length, next));
        BlockTable[] tb = BlockTable.fromZero(tables(b.length, next));
        List<StepBatch> steps = new ArrayList<>();
        steps.add(new StepBatch(List.of(new SequenceChunk(1, Arrays.copyOfRange(a, 0, 100), 0, ta, 0, 0, new int[0]))));
        steps.add(new StepBatch(List.of(
                new SequenceChunk(1, Arrays.copyOfRange(a, 100, 200), 100, ta, 0, 0, new int[]{0, 99}),
                SequenceChunk.of(2, Arrays.copyOfRange(b, 0, 180), 0, tb))));
        steps.add(new StepBatch(List.of(
                SequenceChunk.of(1, Arrays.copyOfRange(a, 200, 300), 200, ta),
                SequenceChunk.of(2, Arrays.copyOfRange(b, 180, 181), 180, tb))));
        for (int i = 0; i < 19; i++) {
            // request 2 decodes greedily from step 10 on: its row comes back as the argmax token
            SequenceChunk second = SequenceChunk.of(2, Arrays.copyOfRange(b, 181 + i, 182 + i), 181 + i, tb);
            steps.add(new StepBatch(List.of(
                    SequenceChunk.of(1, Arrays.copyOfRange(a, 300 + i, 301 + i), 300 + i, ta),
                    i >= 10 ? second.withArgmaxOnly() : second)));
        }
        return steps;
    }

    @Test
    void aScheduleThroughTheWorkerGivesTheInProcessLogitsBitForBit() {
        KvPools remotePools = remote.allocateKv(layout, PAGES);
        KvPools localPools = local.allocateKv(layout, PAGES);
        assertThat(remotePools.pages()).isEqualTo(localPools.pages());
        assertThat(remotePools.bytes()).isEqualTo(localPools.bytes());
        assertThat(remote.weightBytes()).isEqualTo(local.weightBytes());
        // kvMemoryBytes is the host's free memory as each process reads it: it may differ
        assertThat(remote.capabilities()).usingRecursiveComparison().ignoringFields("kvMemoryBytes")
                .isEqualTo(local.capabilities());
        assertThat(remote.deviceMemory()).isEqualTo(local.deviceMemory());

        int step = 0;
        for (StepBatch batch : schedule()) {
            StepResult expected = local.execute(batch);
            StepResult actual = remote.execute(batch);
            assertThat(actual.vocab()).isEqualTo(expected.vocab());
            assertThat(actual.rowStart()).as("step %d row starts", step).isEqualTo(expected.rowStart());
            assertThat(actual.tokens()).as("step %d tokens", step).isEqualTo(expected.tokens());
            if (step >= 13) {
                assertThat(expected.tokens()[1]).as("step %d: request 2 greedy", step).isNotNegative();
            }
            assertThat(actual.logits().byteSize()).isEqualTo(expected.logits().byteSize());
            // byte for byte, not just ==: -0.0 and NaN payloads survive the channel too
            long first = actual.logits().mismatch(expected.logits());
            assertThat(first).as("step %d: first differing logit at %d", step, first / 4).isEqualTo(-1);
            step++;
        }
        assertThat(remote.takeKvLoss()).as("no crash, no KV loss").isEmpty();
        assertThat(states).extracting(WorkerState::state).containsExactly("running");
    }

    @Test
    void aBatchTheBackendRefusesFailsWithItsMessageAndTheWorkerServesOn() {
        remote.allocateKv(layout, PAGES);
        local.allocateKv(layout, PAGES);
        BlockTable[] bad = {new BlockTable(0, new int[]{1_000_000})};
        StepBatch batch = new StepBatch(List.of(SequenceChunk.of(7, new int[]{1, 2, 3}, 0, bad)));
        Throwable expected = org.assertj.core.api.Assertions.catchThrowable(() -> local.execute(batch));
        assertThat(expected).isInstanceOf(RuntimeException.class);
        assertThatThrownBy(() -> remote.execute(batch)).isInstanceOf(expected.getClass()).hasMessage(expected.getMessage());
        StepBatch good = schedule().getFirst();
        assertThat(remote.execute(good).logits().mismatch(local.execute(good).logits())).as("first differing byte").isEqualTo(-1);
    }
}
