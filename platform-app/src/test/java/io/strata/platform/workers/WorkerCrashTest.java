package io.strata.platform.workers;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.admin.ServingView;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole server with {@code strata.engine.worker-process=true}, the real CPU plugin in a real worker process,
 * real HTTP: killing the worker in the middle of a streamed completion ends that stream with an error event in
 * the API's shape (not a hang), the crash is counted and shown, the worker is restarted, and the next completion
 * of the same prompt is the greedy text it was before the crash, computed afresh (the prefix cache was dropped).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:worker-crash;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=worker-crash-test-password",
        "strata.backend=cpu",
        "strata.engine.worker-process=true",
        "strata.scheduler.max-num-batched-tokens=512"})
class WorkerCrashTest {

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target", "worker-crash-plugins"));
    }

    /** About 300 prompt tokens: its first block is published to the prefix cache before the crash. */
    static final String PROMPT = "def f(x):\n" + "    x = x + 1\n".repeat(120) + "    return";

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ServingBackend serving;
    @Autowired
    InferenceEngine engine;
    @Autowired
    MeterRegistry registry;
    @Autowired
    ObjectMapper json;

    @Test
    void aKilledWorkerFailsItsStreamIsRestartedAndTheNextCompletionIsTheSame() throws InterruptedException {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(120)).build();
        String key = keys.create("worker-crash", null).secret();
        WorkerState before = serving.worker("worker-0").orElseThrow();
        assertThat(before.state()).isEqualTo("running");
        assertThat(before.pid()).isPositive();

        JsonNode first = complete(client, key);
        String text = first.get("choices").get(0).get("text").stringValue();
        JsonNode again = complete(client, key);
        assertThat(again.get("choices").get(0).get("text").stringValue()).isEqualTo(text);
        assertThat(cached(again)).as("the prompt's first block is served from the prefix cache").isPositive();

        AtomicLong killed = new AtomicLong();
        List<String> events = client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", PROMPT, "max_tokens", 2000, "stream", true, "temperature", 0, "ignore_eos", true))
                .exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseBody()
                .filter(d -> !d.isBlank())
                .doOnNext(d -> {
                    if (killed.get() == 0 && d.contains("\"text\"")) {
                        killed.set(before.pid());
                        ProcessHandle.of(before.pid()).orElseThrow().destroyForcibly();
                    }
                })
                .collectList().block(Duration.ofSeconds(120));
        assertThat(killed.get()).as("the worker was killed while the stream ran").isEqualTo(before.pid());
        assertThat(events).isNotNull();
        assertThat(events.getLast().trim()).isEqualTo("[DONE]");
        JsonNode error = json.readTree(events.get(events.size() - 2)).get("error");
        assertThat(error).as(String.join("\n", events.subList(Math.max(0, events.size() - 3), events.size()))).isNotNull();
        assertThat(error.get("message").stringValue()).contains("worker-0").contains("crashed").contains("exited with code");
        assertThat(error.get("code").intValue()).isEqualTo(500);
        assertThat(error.get("message").stringValue()).doesNotContain("\tat ").doesNotContain("Exception");

        WorkerState after = WorkerStates.awaitRunning(serving, "worker-0", before.pid());
        assertThat(after.restarts()).isEqualTo(1);
        assertThat(after.lastCrash()).contains("exited with code");
        assertThat(registry.get("strata.worker_restarts").counter().count()).isEqualTo(1.0);
        List<String> console = ServingView.of(serving, engine.status()).workers();
        assertThat(console).hasSize(1);
        assertThat(console.getFirst()).contains("running").contains("restarted 1 time(s)").contains("last crash");
        client.get().uri("/health").exchange().expectStatus().isOk();
        String metrics = client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics).contains("strata_worker_restarts_total{worker=\"worker-0\"} 1.0");

        JsonNode fresh = complete(client, key);
        assertThat(fresh.get("choices").get(0).get("text").stringValue()).isEqualTo(text);
        assertThat(cached(fresh)).as("nothing computed before the crash is reused").isZero();
        JsonNode cachedAgain = complete(client, key);
        assertThat(cachedAgain.get("choices").get(0).get("text").stringValue()).isEqualTo(text);
        assertThat(cached(cachedAgain)).as("the cache fills again on the new worker").isPositive();
    }

    private JsonNode complete(WebTestClient client, String key) {
        byte[] body = client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", PROMPT, "max_tokens", 24, "temperature", 0))
                .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody();
        return json.readTree(body);
    }

    private static int cached(JsonNode completion) {
        return completion.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue();
    }
}
