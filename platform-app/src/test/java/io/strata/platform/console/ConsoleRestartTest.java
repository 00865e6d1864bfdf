package io.strata.platform.console;

import io.strata.platform.config.TestPlatform;
import io.strata.platform.engine.EngineProperties;
import io.strata.platform.requestlog.RequestLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
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
            // prompt logging applies at once; this platform's engine is offline (no backend plugin), so the
            // engine limits wait for the next start
            assertThat(platform.bean(RequestLogWriter.class).logPrompts()).isTrue();
            assertThat(settings.views()).filteredOn(v -> v.saved() != null && v.setting() != ConsoleSetting.LOG_PROMPTS)
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

            // the live stream sends a stats event about every second and ends when the platform stops
            HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
            String base = platform.baseUrl();
            http.send(HttpRequest.newBuilder(URI.create(base + "/login")).build(), HttpResponse.BodyHandlers.discarding());
            String csrf = ((CookieManager) http.cookieHandler().orElseThrow()).getCookieStore().getCookies().stream()
                    .filter(c -> c.getName().equals("XSRF-TOKEN")).findFirst().orElseThrow().getValue();
            HttpResponse<Void> login = http.send(HttpRequest.newBuilder(URI.create(base + "/login"))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("username=admin&password=" + TestPlatform.ADMIN_PASSWORD
                            + "&_csrf=" + csrf)).build(), HttpResponse.BodyHandlers.discarding());
            assertThat(login.headers().firstValue("Location").orElseThrow()).doesNotContain("error");
            HttpResponse<Stream<String>> stream = http.send(HttpRequest.newBuilder(URI.create(base + "/admin/api/console/stream"))
                    .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofLines());
            assertThat(stream.statusCode()).isEqualTo(200);
            Iterator<String> lines = stream.body().iterator();
            List<String> events = new ArrayList<>();
            while (events.size() < 2 && lines.hasNext()) {
                String line = lines.next();
                if (line.startsWith("data:")) {
                    events.add(line);
                }
            }
            assertThat(events).hasSize(2).allSatisfy(e -> assertThat(e).contains("\"buckets\"").contains("\"prefix\""));
            long stopping = System.nanoTime();
            platform.stop();
            assertThat(Duration.ofNanos(System.nanoTime() - stopping)).as("stop with a dashboard open").isLessThan(Duration.ofSeconds(15));
            while (lines.hasNext()) {
                lines.next(); // the stream ended instead of hanging
            }

            // a command-line flag still beats a saved value, and the page says so
            platform.start(models, "strata.scheduler.max-queued-requests=555");
            assertThat(platform.bean(EngineProperties.class).maxQueuedRequests()).isEqualTo(555);
            assertThat(platform.bean(ConsoleSettings.class).views())
                    .filteredOn(v -> v.setting() == ConsoleSetting.MAX_QUEUED_REQUESTS).singleElement()
                    .satisfies(v -> assertThat(v.overriddenBy()).isEqualTo("commandLineArgs"));
        }
    }
}
