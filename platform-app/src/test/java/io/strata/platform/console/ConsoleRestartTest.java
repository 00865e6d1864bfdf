package io.strata.platform.console;

import io.strata.platform.config.TestPlatform;
import io.strata.platform.engine.EngineProperties;
import io.strata.platform.requestlog.RequestLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the console stores survives a restart of the whole platform: saved settings become the engine's and
 * the request log's configuration at the next start, and the per-minute history the dashboard's charts
 * start from is still there.
 */
class ConsoleRestartTest {

    @Test
    void savedSettingsApplyAtTheNextStartAndHistoryIsKept(@TempDir Path home) throws Exception {
        String models = "strata.models.dir=" + ConsoleTestEngine.modelDir().getParent().toAbsolutePath();
        try (TestPlatform platform = TestPlatform.in(home).start(models)) {
            assertThat(platform.bean(EngineProperties.class).maxQueuedRequests()).isEqualTo(1024);
            assertThat(platform.bean(RequestLogWriter.class).logPrompts()).isFalse();

            ConsoleSettings settings = platform.bean(ConsoleSettings.class);
            assertThatThrownBy(() -> settings.save(Map.of("max-num-seqs", "-3")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("strata.scheduler.max-num-seqs");
            Map<String, String> changed = settings.save(Map.of("max-queued-requests", "777", "max-num-seqs", "32",
                    "log-prompts", "on"));
            assertThat(changed).containsOnly(Map.entry("strata.scheduler.max-queued-requests", "777"),
                    Map.entry("strata.scheduler.max-num-seqs", "32"), Map.entry("strata.log-prompts", "true"));
            assertThat(settings.views()).filteredOn(v -> v.saved() != null)
                    .allSatisfy(v -> assertThat(v.pendingRestart()).as(v.setting().property()).isTrue());

            StatsSampler sampler = platform.bean(StatsSampler.class);
            for (int i = 0; i < 3; i++) {
                sampler.sample();
            }

            platform.stop();
            platform.start(models);

            assertThat(platform.bean(EngineProperties.class).maxQueuedRequests()).isEqualTo(777);
            assertThat(platform.bean(EngineProperties.class).maxNumSeqs()).isEqualTo(32);
            assertThat(platform.bean(RequestLogWriter.class).logPrompts()).isTrue();
            assertThat(platform.bean(ConsoleSettings.class).views()).filteredOn(v -> v.saved() != null).hasSize(3)
                    .allSatisfy(v -> assertThat(v.pendingRestart()).isFalse());
            assertThat(platform.bean(MinuteHistory.class).since(Instant.now().minus(Duration.ofMinutes(10))))
                    .as("minutes written at shutdown").isNotEmpty()
                    .allSatisfy(m -> assertThat(m.samples()).isPositive());

            // a command-line flag still beats a saved value, and the page says so
            platform.stop();
            platform.start(models, "strata.scheduler.max-queued-requests=555");
            assertThat(platform.bean(EngineProperties.class).maxQueuedRequests()).isEqualTo(555);
            assertThat(platform.bean(ConsoleSettings.class).views())
                    .filteredOn(v -> v.setting() == ConsoleSetting.MAX_QUEUED_REQUESTS).singleElement()
                    .satisfies(v -> assertThat(v.overriddenBy()).isEqualTo("commandLineArgs"));
        }
    }
}
