package io.strata.platform.engine;

import io.strata.platform.admin.BackendSummary;
import io.strata.platform.config.TestPlatform;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Choosing the backend in a whole platform: the real CPU plugin (priority 0) next to a test plugin that
 * ranks above it (priority 100) and runs out of device memory when it loads the model.
 */
@ExtendWith(OutputCaptureExtension.class)
class BackendFallbackTest {
    static final String MODELS = "strata.models.dir=" + Path.of(System.getProperty("strata.models.dir", "../models")).toAbsolutePath();
    static final String SMALL = "small-gpu";

    static TestPlatform platform(Path home) throws IOException {
        TestPlatform p = TestPlatform.in(home);
        PluginJars.copyBuiltPlugins(p.pluginsDir());
        PluginJars.executionBackendOutOfMemory(p.pluginsDir().resolve("small-gpu.jar"), SMALL, 100);
        return p;
    }

    static WebTestClient http(TestPlatform p) {
        return WebTestClient.bindToServer().baseUrl(p.baseUrl()).responseTimeout(Duration.ofSeconds(30)).build();
    }

    /**
     * ERROR lines and stack traces of Strata's own code (a paranoid leak report of a test's HTTP client is
     * Netty's ERROR line, with frames of Netty only, and not this test's concern).
     */
    static java.util.List<String> strataErrors(CapturedOutput output) {
        return output.getAll().lines()
                .filter(l -> (l.contains(" ERROR ") && l.contains("i.s.")) || l.contains("at io.strata."))
                .toList();
    }

    @Test
    void unsetTheHigherPriorityBackendIsTriedFirstAndTheCpuServesWhenItCannotLoad(@TempDir Path home, CapturedOutput output)
            throws IOException {
        try (TestPlatform p = platform(home).start(MODELS, "strata.small-gpu.memory-fraction=0.5")) {
            InferenceEngine engine = p.bean(InferenceEngine.class);
            assertThat(engine.status().up()).as(engine.status().detail()).isTrue();
            ServingBackend serving = p.bean(ServingBackend.class);
            assertThat(serving.pluginId()).contains("cpu");
            assertThat(serving.serving().orElseThrow().device()).isEqualTo("host memory");
            assertThat(serving.serving().orElseThrow().pools()).isNotEmpty()
                    .allSatisfy(pool -> assertThat(pool.pages()).isPositive());
            assertThat(serving.deviceMemory()).isEmpty();
            // the skipped backend's reason, with the setting it was given, is what the dashboard shows
            assertThat(serving.skipped()).singleElement().satisfies(s -> {
                assertThat(s.pluginId()).isEqualTo(SMALL);
                assertThat(s.reason()).contains("out of device memory").contains("strata.small-gpu.memory-fraction=0.5");
            });
            BackendSummary summary = BackendSummary.of(p.bean(PluginHost.class).plugins(), serving.pluginId(),
                    serving.skipped(), engine.status());
            assertThat(summary.headline()).isEqualTo("The model is served by the cpu backend.");
            assertThat(summary.lines()).filteredOn(l -> l.pluginId().equals(SMALL)).singleElement().satisfies(l -> {
                assertThat(l.status()).isEqualTo("skipped");
                assertThat(l.detail()).contains("out of device memory").endsWith("the cpu backend serves instead");
            });
            http(p).get().uri("/health").exchange().expectStatus().isOk();
        }
        assertThat(output.getAll()).contains("WARN").contains("falling back to backend 'cpu'");
        assertThat(strataErrors(output)).isEmpty();
    }

    @Test
    void namedExplicitlyItsFailureTakesTheEngineOfflineAndThePlatformStaysUp(@TempDir Path home, CapturedOutput output)
            throws IOException {
        try (TestPlatform p = platform(home).start(MODELS, "strata.backend=" + SMALL)) {
            InferenceEngine engine = p.bean(InferenceEngine.class);
            assertThat(engine.status().up()).isFalse();
            assertThat(engine.status().detail()).contains("backend '" + SMALL + "' could not load the model")
                    .contains("out of device memory").contains("(strata.backend=" + SMALL + ")");
            assertThat(p.bean(ServingBackend.class).serving()).isEmpty();
            String health = http(p).get().uri("/health").exchange().expectStatus().isEqualTo(503)
                    .expectBody(String.class).returnResult().getResponseBody();
            assertThat(health).contains("out of device memory");
            http(p).get().uri("/login").exchange().expectStatus().isOk();
            http(p).get().uri("/actuator/health/liveness").exchange().expectStatus().isOk();
        }
        assertThat(output.getAll()).contains("Engine offline: backend '" + SMALL + "' could not load the model");
        assertThat(strataErrors(output)).isEmpty();
    }

    @Test
    void aNamedBackendThatIsNotAvailableNamesTheAvailableOnes(@TempDir Path home) throws IOException {
        try (TestPlatform p = platform(home).start(MODELS, "strata.backend=cuda")) {
            InferenceEngine engine = p.bean(InferenceEngine.class);
            assertThat(engine.status().up()).isFalse();
            // on this host the CUDA plugin starts but its probe finds no usable GPU, and the reason says so
            assertThat(engine.status().detail()).contains("strata.backend=cuda")
                    .containsAnyOf("plugin 'cuda' is not available here: CUDA unavailable:", "does not execute models")
                    .contains("available execution backends: " + SMALL + ", cpu");
            http(p).get().uri("/health").exchange().expectStatus().isEqualTo(503);
        }
    }

    @Test
    void namingTheCpuServesOnTheCpuWithoutTryingTheOther(@TempDir Path home) throws IOException {
        try (TestPlatform p = platform(home).start(MODELS, "strata.backend=cpu")) {
            assertThat(p.bean(InferenceEngine.class).status().up()).isTrue();
            assertThat(p.bean(ServingBackend.class).pluginId()).contains("cpu");
            assertThat(p.bean(ServingBackend.class).skipped()).isEmpty();
        }
    }
}
