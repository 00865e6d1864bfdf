package io.strata.platform.plugins;

import io.strata.platform.config.TestPlatform;
import io.strata.spi.BackendProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plugin loading against real jars in a real plugins folder, with the whole platform running:
 * discovery, broken jars reported FAILED while the platform stays healthy, and enable/disable
 * surviving a restart.
 */
class PluginLifecycleTest {

    @TempDir
    Path home;

    @Test
    void discoversTheBuiltPluginsAndTheirBackendsAnswer() throws Exception {
        try (TestPlatform platform = TestPlatform.in(home)) {
            PluginJars.copyBuiltPlugins(platform.pluginsDir());
            platform.start();
            PluginHost host = platform.bean(PluginHost.class);

            Map<String, PluginView> plugins = byId(host.plugins());
            assertThat(plugins).containsKeys("cpu", "cuda");

            PluginView cpu = plugins.get("cpu");
            assertThat(cpu.state()).isEqualTo("STARTED");
            assertThat(cpu.backends()).hasSize(1);
            BackendReport cpuBackend = cpu.backends().getFirst();
            assertThat(cpuBackend.identity().id()).isEqualTo("cpu");
            assertThat(cpuBackend.available()).isTrue();
            assertThat(cpuBackend.probe().devices()).isNotEmpty();
            assertThat(cpuBackend.probe().devices().getFirst().totalMemoryBytes()).isPositive();

            // the provider object really comes from the plugin's own class loader, not the app's
            LoadedBackend loaded = host.availableBackends().stream()
                    .filter(b -> b.pluginId().equals("cpu")).findFirst().orElseThrow();
            assertThat(loaded.provider().getClass().getClassLoader()).isNotSameAs(BackendProvider.class.getClassLoader());
            assertThat(loaded.provider().getClass().getName()).isEqualTo("io.strata.backend.cpu.CpuBackendProvider");
            assertThat(loaded.provider().probe().available()).isTrue();

            PluginView cuda = plugins.get("cuda");
            assertThat(cuda.state()).isEqualTo("STARTED");
            BackendReport cudaBackend = cuda.backends().getFirst();
            if (!cudaBackend.available()) {
                // the normal case on a host without an NVIDIA driver
                assertThat(cudaBackend.probe().reason()).startsWith("CUDA unavailable: ");
            }
        }
    }

    @Test
    void brokenJarsAreReportedFailedAndThePlatformStaysUp() throws Exception {
        try (TestPlatform platform = TestPlatform.in(home)) {
            Path dir = platform.pluginsDir();
            PluginJars.copyBuiltPlugins(dir);
            PluginJars.corruptJar(dir.resolve("corrupt.jar"));
            PluginJars.notAPluginJar(dir.resolve("plain-library.jar"));
            PluginJars.pluginThatFailsToStart(dir.resolve("failing-start.jar"), "failing-start");
            PluginJars.pluginWhoseProbeThrows(dir.resolve("exploding.jar"), "exploding");
            PluginJars.pluginWithMissingPluginClass(dir.resolve("ghost.jar"), "ghost");
            platform.start();

            Map<String, PluginView> plugins = byId(platform.bean(PluginHost.class).plugins());

            assertThat(plugins.get("corrupt.jar").state()).isEqualTo("FAILED");
            assertThat(plugins.get("corrupt.jar").reason()).contains("not a jar");
            assertThat(plugins.get("plain-library.jar").state()).isEqualTo("FAILED");
            assertThat(plugins.get("plain-library.jar").reason()).contains("no plugin.properties");
            assertThat(plugins.get("failing-start").state()).isEqualTo("FAILED");
            assertThat(plugins.get("failing-start").reason()).contains("license check failed at start");
            assertThat(plugins.get("exploding").state()).isEqualTo("FAILED");
            assertThat(plugins.get("exploding").reason()).contains("driver exploded while probing");
            assertThat(plugins.get("ghost.jar").state()).isEqualTo("FAILED");
            assertThat(plugins.get("ghost.jar").reason()).contains("plugin.class test.ghost.MissingPlugin")
                    .contains("no such class").doesNotContain("NullPointerException");

            // the good plugin is unaffected and the engine is offered only working backends
            assertThat(plugins.get("cpu").state()).isEqualTo("STARTED");
            assertThat(platform.bean(PluginHost.class).availableBackends())
                    .extracting(LoadedBackend::pluginId).contains("cpu").doesNotContain("exploding", "failing-start");

            // retrying a broken plugin reports the same failure again, and disabling it sticks
            PluginHost host = platform.bean(PluginHost.class);
            PluginView retried = host.enable("exploding");
            assertThat(retried.state()).isEqualTo("FAILED");
            assertThat(retried.reason()).contains("driver exploded while probing");
            assertThat(host.enable("failing-start").state()).isEqualTo("FAILED");
            assertThat(host.disable("failing-start").state()).isEqualTo("DISABLED");
            platform.restart();
            assertThat(platform.bean(PluginHost.class).plugin("failing-start").orElseThrow().state()).isEqualTo("DISABLED");
            assertThat(platform.bean(PluginHost.class).plugin("exploding").orElseThrow().state()).isEqualTo("FAILED");

            WebTestClient http = WebTestClient.bindToServer().baseUrl(platform.baseUrl())
                    .responseTimeout(Duration.ofSeconds(60)).build();
            http.get().uri("/actuator/health").exchange()
                    .expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP");
        }
    }

    @Test
    void aDisabledPluginStaysDisabledAfterARestartAndCanBeEnabledAgain() throws Exception {
        try (TestPlatform platform = TestPlatform.in(home)) {
            PluginJars.copyBuiltPlugins(platform.pluginsDir());
            platform.start();
            PluginHost host = platform.bean(PluginHost.class);
            assertThat(host.plugin("cpu").orElseThrow().state()).isEqualTo("STARTED");

            assertThat(host.disable("cpu").state()).isEqualTo("DISABLED");
            assertThat(host.availableBackends()).extracting(LoadedBackend::pluginId).doesNotContain("cpu");

            platform.restart();
            host = platform.bean(PluginHost.class);
            assertThat(host.plugin("cpu").orElseThrow().state()).isEqualTo("DISABLED");
            assertThat(host.plugin("cuda").orElseThrow().state()).isEqualTo("STARTED");
            assertThat(host.availableBackends()).extracting(LoadedBackend::pluginId).doesNotContain("cpu");

            PluginView enabled = host.enable("cpu");
            assertThat(enabled.state()).isEqualTo("STARTED");
            assertThat(enabled.backends().getFirst().available()).isTrue();

            platform.restart();
            assertThat(platform.bean(PluginHost.class).plugin("cpu").orElseThrow().state()).isEqualTo("STARTED");
        }
    }

    private static Map<String, PluginView> byId(List<PluginView> views) {
        return views.stream().collect(Collectors.toMap(PluginView::pluginId, Function.identity()));
    }
}
