package io.strata.platform.engine;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginJars;
import io.strata.platform.workers.WorkerProperties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker process that cannot start (here: the checkpoint folder it is given does not exist) is a backend that
 * cannot load the model: the engine starts offline with a reason naming the worker's exit code and what it
 * printed, exactly as for an in-process backend whose load throws; nothing is left running.
 */
class WorkerStartFailureTest {
    static EngineConfiguration.ServedModel model;

    @BeforeAll
    static void load() {
        Path dir = Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
        model = EngineConfiguration.load(dir, new ModelProperties(dir.toString(), 1024, "fail"));
    }

    @AfterAll
    static void close() {
        model.weights().close();
    }

    @Test
    void aWorkerThatCannotLoadTheModelLeavesTheEngineOfflineWithItsExitCodeAndMessage() {
        Path missing = Path.of("target", "no-such-model");
        EngineConfiguration.ServedModel broken = new EngineConfiguration.ServedModel(missing, model.weights(),
                model.tokenizer(), model.card());
        FlakyBackend provider = new FlakyBackend();
        EngineAssembly.Workers workers = new EngineAssembly.Workers(new WorkerProperties(true, null, null, null, null, null, null),
                id -> Optional.of(PluginJars.builtJar("backend-plugin-example")));
        ServingBackend serving = new ServingBackend();
        for (String requested : new String[]{"cpu", null}) {
            InferenceEngine engine = EngineConfiguration.startOnBackend(broken, new TokenizerCodec(model.tokenizer()),
                    BackendChoice.of(List.of(new LoadedBackend("cpu", provider, provider.probe())), requested),
                    new MockEnvironment(), new EngineProperties(256, 8, 64, 100_000L, "fcfs"),
                    new KvProperties(null, null, 1024L, true), new SimpleMeterRegistry(), serving, 1, workers,
                    SamplingProperties.defaults());
            assertThat(engine).isInstanceOf(OfflineEngine.class);
            assertThat(engine.status().up()).isFalse();
            assertThat(engine.status().detail())
                    .startsWith("backend 'cpu' could not load the model: worker-0 did not start: exited with code 2")
                    .contains("strata worker: cannot start:")
                    .contains("no-such-model");
            if (requested != null) {
                assertThat(engine.status().detail()).endsWith("(strata.backend=cpu)");
            }
            assertThat(serving.skipped()).extracting(ServingBackend.Skipped::pluginId).containsExactly("cpu");
            assertThat(serving.workers()).as("a worker that never started is not reported as serving").isEmpty();
        }
    }
}
