package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingEngine;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The production wiring end to end: the bundled tiny model loaded at start, the CPU backend plugin from
 * the plugins folder, the hybrid KV cache manager, real HTTP. Driven by the official {@code openai} npm
 * package (pinned in src/test/node/package-lock.json, installed with {@code npm ci} on first use) under
 * the machine's Node.js, plus a disconnect and a seed check.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:cpu-e2e;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=cpu-e2e-test-password",
        "strata.model.max-model-len=2048",
        "strata.scheduler.max-num-seqs=16"})
class CpuBackendEndToEndTest {
    private static final Path NODE_DIR = Path.of("src/test/node");
    private static final Path PLUGINS = Path.of("target/cpu-e2e-plugins");

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, PLUGINS);
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    InferenceEngine engine;
    @Autowired
    ObjectMapper json;

    String key;

    @BeforeEach
    void key() {
        key = keys.create("cpu-e2e", null).secret();
    }

    @Test
    void theModelIsServedOnTheCpuBackend() {
        assertThat(engine.status().up()).as(engine.status().detail()).isTrue();
        assertThat(engine).isInstanceOf(ServingEngine.class);
        WebTestClient.bindToServer().baseUrl("http://localhost:" + port).build()
                .get().uri("/health").exchange().expectStatus().isOk();
    }

    @Test
    void officialOpenAiClientWorksAgainstTheServer() throws Exception {
        installClient();
        ProcessBuilder pb = new ProcessBuilder("node", "e2e.mjs").directory(NODE_DIR.toFile()).redirectErrorStream(true);
        pb.environment().put("STRATA_BASE_URL", "http://localhost:" + port + "/v1");
        pb.environment().put("STRATA_API_KEY", key);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        System.out.println(out);
        assertThat(out).contains("8 passed, 0 failed");
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void sameSeedSameOutputOnTheRealModel() {
        WebTestClient c = WebTestClient.bindToServer().baseUrl("http://localhost:" + port).responseTimeout(Duration.ofMinutes(2)).build();
        Map<String, Object> req = Map.of("prompt", "def main():", "max_tokens", 12, "temperature", 1.0, "top_p", 0.9, "seed", 42);
        String a = text(c, req);
        String b = text(c, req);
        String other = text(c, Map.of("prompt", "def main():", "max_tokens", 12, "temperature", 1.0, "top_p", 0.9, "seed", 43));
        assertThat(a).isEqualTo(b);
        assertThat(other).isNotEqualTo(a);
    }

    private String text(WebTestClient c, Map<String, Object> req) {
        JsonNode r = json.readTree(c.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(req).exchange().expectStatus().isOk()
                .expectBody().returnResult().getResponseBody());
        return r.get("choices").get(0).get("text").stringValue();
    }

    @Test
    void clientDisconnectFreesThePagesOfTheRealEngine() throws InterruptedException {
        ServingEngine serving = (ServingEngine) engine;
        AtomicReference<String> first = new AtomicReference<>();
        reactor.core.Disposable d = WebClient.create("http://localhost:" + port).post().uri("/v1/completions")
                .header("Authorization", "Bearer " + key).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", "for i in range(10):", "max_tokens", 1500, "stream", true, "ignore_eos", true))
                .retrieve().bodyToFlux(String.class).doOnNext(s -> first.compareAndSet(null, s)).subscribe();
        for (int i = 0; i < 3000 && first.get() == null; i++) {
            Thread.sleep(10);
        }
        assertThat(first.get()).isNotNull();
        assertThat(serving.kvUsage().usedPages()).isPositive();
        d.dispose();
        for (int i = 0; i < 3000 && (serving.inFlight() > 0 || serving.kvUsage().usedPages() > 0); i++) {
            Thread.sleep(10);
        }
        assertThat(serving.inFlight()).isZero();
        assertThat(serving.kvUsage().allFreeOrCached()).as(serving.kvUsage().toString()).isTrue();
    }

    /** {@code npm ci} from the lock file, once; needs the npm registry on first run. */
    static void installClient() throws IOException, InterruptedException {
        if (Files.isDirectory(NODE_DIR.resolve("node_modules/openai"))) {
            return;
        }
        Process p = new ProcessBuilder(List.of("npm", "ci", "--no-audit", "--no-fund"))
                .directory(NODE_DIR.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("npm ci failed:\n" + out).isZero();
    }
}
