package io.strata.platform.engine;

import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.ProbeResult;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code strata.backend}, the priority order, and the {@code strata.<plugin id>.*} settings a backend receives. */
class BackendChoiceTest {

    /** A backend as the plugin host would offer it; only its id and priority matter here. */
    record Backend(String id, int priority) implements BackendProvider, ExecutionBackend {
        @Override
        public BackendIdentity identity() {
            return new BackendIdentity(id, id, "Test", "1");
        }

        @Override
        public ProbeResult probe() {
            return ProbeResult.available(List.of(), Set.of());
        }

        @Override
        public BackendCapabilities capabilities() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ModelExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options) {
            throw new UnsupportedOperationException();
        }
    }

    /** A plugin that probes fine but executes nothing (a vendor plugin that only reports its devices). */
    record ProbeOnly(String id) implements BackendProvider {
        @Override
        public BackendIdentity identity() {
            return new BackendIdentity(id, id, "Test", "1");
        }

        @Override
        public ProbeResult probe() {
            return ProbeResult.available(List.of(), Set.of());
        }
    }

    static LoadedBackend loaded(BackendProvider p) {
        return new LoadedBackend(p.identity().id(), p, p.probe());
    }

    final List<LoadedBackend> fleet = List.of(loaded(new Backend("cpu", 0)), loaded(new ProbeOnly("probe-only")),
            loaded(new Backend("gpu", 100)), loaded(new Backend("acme", 0)));

    @Test
    void unsetMeansHighestPriorityFirstThenByPluginId() {
        BackendChoice choice = BackendChoice.of(fleet, null);
        assertThat(choice.offlineReason()).isNull();
        assertThat(choice.explicit()).isFalse();
        assertThat(choice.candidates()).extracting(LoadedBackend::pluginId).containsExactly("gpu", "acme", "cpu");
        assertThat(BackendChoice.of(fleet, "  ").candidates()).hasSize(3);
    }

    @Test
    void aNamedBackendIsTheOnlyCandidate() {
        BackendChoice choice = BackendChoice.of(fleet, "cpu");
        assertThat(choice.explicit()).isTrue();
        assertThat(choice.candidates()).extracting(LoadedBackend::pluginId).containsExactly("cpu");
    }

    @Test
    void aNamedBackendThatIsNotAvailableSaysWhichAre() {
        BackendChoice missing = BackendChoice.of(fleet, "cuda");
        assertThat(missing.candidates()).isEmpty();
        assertThat(missing.offlineReason()).contains("strata.backend=cuda").contains("no plugin has the id 'cuda'")
                .contains("available execution backends: gpu, acme, cpu");
        assertThat(BackendChoice.of(fleet, "cuda", Map.of("cuda", "CUDA unavailable: no GPU")).offlineReason())
                .contains("plugin 'cuda' is not available here: CUDA unavailable: no GPU")
                .endsWith("available execution backends: gpu, acme, cpu");

        assertThat(BackendChoice.of(fleet, "probe-only").offlineReason())
                .contains("plugin 'probe-only' is available but does not execute models");
        assertThat(BackendChoice.of(List.of(), "cpu").offlineReason()).endsWith("available execution backends: none");
        assertThat(BackendChoice.of(List.of(loaded(new ProbeOnly("x"))), null).offlineReason())
                .startsWith("no execution backend available");
    }

    @Test
    void eachBackendGetsItsOwnSettingsFromEveryPropertySource() {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("application", Map.of(
                "strata.cuda.memory-fraction", "0.8",
                "strata.cuda.graphs", "off",
                "strata.cpu.threads", "4",
                "strata.cudax.other", "no",
                "strata.backend", "cuda")));
        // the environment outranks application.yml, and its underscores become the key's dashes
        env.getPropertySources().addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment",
                Map.<String, Object>of("STRATA_CUDA_MEMORY_FRACTION", "0.7")));

        assertThat(BackendSettings.requested(env)).isEqualTo("cuda");
        assertThat(BackendSettings.of(env, "cuda")).containsOnly(Map.entry("memory-fraction", "0.7"), Map.entry("graphs", "off"));
        assertThat(BackendSettings.of(env, "cpu")).containsOnly(Map.entry("threads", "4"));
        assertThat(BackendSettings.of(env, "acme")).isEmpty();
        assertThat(BackendSettings.of(env, "Not_A_Name")).isEmpty();
        assertThat(new LoadOptions("m", 1, 1, 0, BackendSettings.of(env, "cuda")).fraction("memory-fraction", 0.9)).isEqualTo(0.7);
    }
}
