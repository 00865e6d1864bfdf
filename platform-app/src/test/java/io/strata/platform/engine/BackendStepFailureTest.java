package io.strata.platform.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.LoadedBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A backend step that throws (a CUDA error in a kernel) fails the requests of that step and nothing else:
 * the real engine assembled by the production path ({@link EngineConfiguration#startOnBackend}: the choice,
 * KV sizing, the KV cache manager, {@link BackendStepRunner}) over a test-only {@link FlakyBackend}, real HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:step-failure;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=step-failure-test-password",
        "strata.plugins.dir=target/no-plugins"})
@Import(BackendStepFailureTest.FlakyEngine.class)
class BackendStepFailureTest {

    @TestConfiguration
    static class FlakyEngine {
        @Bean
        FlakyBackend flakyBackend() {
            return new FlakyBackend();
        }

        @Bean(destroyMethod = "close")
        @Primary
        ServingEngine flakyEngine(FlakyBackend backend, ServingBackend serving, MeterRegistry registry, Environment env) {
            Path dir = Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
            EngineConfiguration.ServedModel model = EngineConfiguration.load(dir, new ModelProperties(dir.toString(), 1024, "fail"));
            InferenceEngine engine = EngineConfiguration.startOnBackend(model, new TokenizerCodec(model.tokenizer()),
                    BackendChoice.of(List.of(new LoadedBackend("flaky", backend, backend.probe())), null), env,
                    new EngineProperties(256, 8, 64, 100_000L, "fcfs"), new KvProperties(null, null, 1024L, true),
                    registry, serving);
            return (ServingEngine) engine;
        }
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ServingEngine engine;
    @Autowired
    FlakyBackend backend;
    @Autowired
    ServingBackend serving;
    @Autowired
    ObjectMapper json;
    @Autowired
    MeterRegistry registry;

    WebTestClient client;
    String key;

    @BeforeEach
    void setUp() {
        client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port).responseTimeout(Duration.ofSeconds(30)).build();
        key = keys.create("step-failure", null).secret();
        backend.stepDelay(0);
    }

    @AfterEach
    void nothingLeaks() throws InterruptedException {
        for (int i = 0; i < 500 && (engine.inFlight() > 0 || engine.kvUsage().usedPages() > 0); i++) {
            Thread.sleep(10);
        }
        assertThat(engine.inFlight()).isZero();
        assertThat(engine.kvUsage().usedPages()).as(engine.kvUsage().toString()).isZero();
        assertThat(engine.kvUsage().allFreeOrCached()).isTrue();
        assertThat(backend.armed()).as("the armed failure happened").isFalse();
    }

    private WebTestClient.ResponseSpec post(Object body) {
        return client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    @Test
    void aFailedStepIsAServerErrorNamingTheBackendAndTheNextRequestIsServed() {
        assertThat(serving.pluginId()).contains("flaky");
        backend.failNextStepWhere(step -> true);
        String body = post(Map.of("prompt", "def main():", "max_tokens", 8, "temperature", 0))
                .expectStatus().is5xxServerError().expectBody(String.class).returnResult().getResponseBody();
        JsonNode error = json.readTree(body).get("error");
        assertThat(error.get("message").stringValue()).contains("the flaky backend failed the step")
                .contains("CUDA error 700");
        assertThat(error.get("code").intValue()).isEqualTo(500);
        assertThat(body).doesNotContain("\tat ").doesNotContain("java.lang.").doesNotContain("Exception");

        JsonNode ok = json.readTree(post(Map.of("prompt", "def main():", "max_tokens", 8, "temperature", 0))
                .expectStatus().isOk().expectBody().returnResult().getResponseBody());
        assertThat(ok.get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("length");
        assertThat(ok.get("usage").get("completion_tokens").intValue()).isEqualTo(8);
        client.get().uri("/health").exchange().expectStatus().isOk();
    }

    @Test
    void everyStreamOfTheFailedStepGetsAnErrorEventThenEndsAndTheOthersGoOn() throws InterruptedException {
        // two streams decoding together, a third that arrives after the failure; the failing step is the first
        // one that carries both streams in decode
        backend.stepDelay(2);
        backend.failNextStepWhere(step -> step.chunks().size() >= 2
                && step.chunks().stream().allMatch(c -> c.tokens().length == 1 && c.startPosition() > 20));
        Map<String, Object> request = Map.of("prompt", "for i in range(10):", "max_tokens", 200, "stream", true,
                "temperature", 0, "ignore_eos", true);
        List<Mono<List<String>>> streams = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            streams.add(client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(request).exchange()
                    .returnResult(String.class).getResponseBody().collectList().map(BackendStepFailureTest::events));
        }
        List<List<String>> results = Mono.zip(streams, parts -> {
            List<List<String>> out = new ArrayList<>();
            for (Object p : parts) {
                @SuppressWarnings("unchecked")
                List<String> events = (List<String>) p;
                out.add(events);
            }
            return out;
        }).block(Duration.ofSeconds(60));
        assertThat(results).hasSize(2).allSatisfy(events -> {
            assertThat(events.getLast()).isEqualTo("[DONE]");
            JsonNode error = json.readTree(events.get(events.size() - 2)).get("error");
            assertThat(error).as(String.join("\n", events)).isNotNull();
            assertThat(error.get("message").stringValue()).contains("the flaky backend failed the step");
            assertThat(events.size()).as("some tokens streamed before the failure").isGreaterThan(3);
        });
        backend.stepDelay(0);

        for (int i = 0; i < 500 && engine.inFlight() > 0; i++) {
            Thread.sleep(10);
        }
        assertThat(engine.kvUsage().usedPages()).isZero();
        List<String> after = events(post(Map.of("prompt", "for i in range(10):", "max_tokens", 5, "stream", true,
                "temperature", 0)).expectStatus().isOk().returnResult(String.class).getResponseBody()
                .collectList().block(Duration.ofSeconds(30)));
        assertThat(after.getLast()).isEqualTo("[DONE]");
        assertThat(after).noneMatch(e -> e.contains("\"error\""));
        assertThat(engine.status().up()).isTrue();
    }

    @Test
    void theDeviceMemoryGaugesCarryTheDevice() {
        String metrics = client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        String tag = "{device=\"" + FlakyBackend.DEVICE + "\"}";
        for (String name : List.of("strata_device_memory_used_bytes", "strata_device_memory_total_bytes",
                "strata_device_memory_free_bytes", "strata_device_weights_bytes", "strata_device_kv_bytes")) {
            assertThat(metrics).contains(name + tag);
        }
        assertThat(registry.get("strata.device.weights").tag("device", FlakyBackend.DEVICE).gauge().value())
                .isEqualTo((double) FlakyBackend.WEIGHTS);
        assertThat(registry.get("strata.device.memory.total").tag("device", FlakyBackend.DEVICE).gauge().value())
                .isEqualTo((double) FlakyBackend.TOTAL);
        long kv = serving.serving().orElseThrow().poolBytes();
        assertThat(kv).isPositive();
        assertThat(serving.deviceMemory().orElseThrow().kvBytes()).isEqualTo(kv);
        assertThat(serving.serving().orElseThrow().device()).isEqualTo(FlakyBackend.DEVICE);
    }

    /** The data of each SSE event ({@code returnResult(String.class)} yields one element per event). */
    private static List<String> events(List<String> data) {
        List<String> out = new ArrayList<>();
        for (String d : data) {
            if (!d.isBlank()) {
                out.add(d.trim());
            }
        }
        return out;
    }
}
