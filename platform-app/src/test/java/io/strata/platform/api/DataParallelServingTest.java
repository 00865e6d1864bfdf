package io.strata.platform.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.StrataApplication;
import io.strata.platform.engine.DataParallelEngine;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.RankLoad;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two attention data-parallel ranks ({@code strata.engine.data-parallel-size=2}) on the real CPU backend over
 * real HTTP: a request sharing a long prefix with an earlier one goes to the rank whose prefix cache holds it
 * and reports the reused tokens; unrelated concurrent requests spread over both ranks; greedy outputs equal
 * those of a one-rank server started from the same plugins and model.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:data-parallel;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=data-parallel-test-password",
        "strata.model.max-model-len=2048",
        "strata.scheduler.max-num-seqs=8",
        "strata.engine.data-parallel-size=2"})
class DataParallelServingTest {
    private static final Path PLUGINS = Path.of("target/data-parallel-plugins");

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
    @Autowired
    MeterRegistry registry;

    String key;

    @BeforeEach
    void setUp() {
        key = keys.create("data-parallel", null).secret();
    }

    @Test
    void theServerRunsTwoRanks() {
        assertThat(engine).isInstanceOf(DataParallelEngine.class);
        assertThat(engine.status().up()).as(engine.status().detail()).isTrue();
        assertThat(engine.rankLoads()).extracting(RankLoad::rank).containsExactly(0, 1);
        for (String rank : List.of("0", "1")) {
            assertThat(registry.find("strata.num_requests_running").tag("rank", rank).gauge()).as("rank " + rank).isNotNull();
            assertThat(registry.find("strata.kv.pages").tag("rank", rank).gauges()).as("rank " + rank).isNotEmpty();
        }
    }

    @Test
    void aSharedLongPrefixStaysOnItsRankAndIsServedFromItsCache() {
        int[] prefix = prompt(600, 11);
        int[] first = concat(prefix, prompt(40, 12));
        int[] second = concat(prefix, prompt(70, 13));

        List<RankLoad> before = engine.rankLoads();
        JsonNode a = completions(port, key, first, 2);
        assertThat(cached(a)).isZero();
        int rank = steppedRank(before, engine.rankLoads());

        List<RankLoad> middle = engine.rankLoads();
        JsonNode b = completions(port, key, second, 2);
        assertThat(cached(b)).as("the two leading 256-token blocks were reused").isEqualTo(512);
        assertThat(steppedRank(middle, engine.rankLoads())).as("same rank as the first request").isEqualTo(rank);
        assertThat(engine.rankLoads().get(rank).prefixHits() - middle.get(rank).prefixHits()).isEqualTo(512);
    }

    @Test
    void unrelatedConcurrentRequestsSpreadOverBothRanksWithTheOutputsOfOneRank() throws Exception {
        List<int[]> prompts = IntStream.range(0, 4).mapToObj(i -> prompt(300 + 20 * i, 20 + i)).toList();
        List<RankLoad> before = engine.rankLoads();
        List<String> spread = GreedyCompletions.concurrently(port, key, prompts, json);
        List<RankLoad> after = engine.rankLoads();
        for (int r = 0; r < 2; r++) {
            assertThat(after.get(r).steps()).as("rank " + r + " served some of them").isGreaterThan(before.get(r).steps());
        }

        List<String> single;
        try (ConfigurableApplicationContext oneRank = startOneRankServer()) {
            int onePort = ((WebServerApplicationContext) oneRank).getWebServer().getPort();
            InferenceEngine one = oneRank.getBean(InferenceEngine.class);
            assertThat(one).isNotInstanceOf(DataParallelEngine.class);
            String oneKey = oneRank.getBean(ApiKeyService.class).create("one-rank", null).secret();
            single = GreedyCompletions.concurrently(onePort, oneKey, prompts, json);
        }
        assertThat(spread).isEqualTo(single);
    }

    /** A second server, one rank, same model and plugins, its own database. */
    private static ConfigurableApplicationContext startOneRankServer() throws IOException {
        Path plugins = Path.of("target/data-parallel-one-rank-plugins");
        PluginJars.copyBuiltPlugins(plugins);
        // command-line arguments: they rank above application.yml, as the test's own properties do
        return new SpringApplicationBuilder(StrataApplication.class).run(
                "--server.port=0",
                "--spring.datasource.url=jdbc:h2:mem:data-parallel-one-rank;DB_CLOSE_DELAY=-1",
                "--strata.admin.initial-password=data-parallel-one-rank-password",
                "--strata.model.max-model-len=2048",
                "--strata.scheduler.max-num-seqs=8",
                "--strata.plugins.dir=" + plugins);
    }

    /** The one rank whose step count moved between two readings. */
    private static int steppedRank(List<RankLoad> before, List<RankLoad> after) {
        List<Integer> moved = new ArrayList<>();
        for (int r = 0; r < before.size(); r++) {
            if (after.get(r).steps() > before.get(r).steps()) {
                moved.add(r);
            }
        }
        assertThat(moved).as("exactly one rank stepped").hasSize(1);
        return moved.getFirst();
    }

    private JsonNode completions(int port, String key, int[] prompt, int maxTokens) {
        String body = WebClient.create("http://localhost:" + port).post().uri("/v1/completions")
                .header("Authorization", "Bearer " + key).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", prompt, "max_tokens", maxTokens, "temperature", 0.0))
                .retrieve().bodyToMono(String.class).block(Duration.ofMinutes(2));
        return json.readTree(body);
    }

    private static int[] prompt(int length, int seed) {
        return IntStream.range(0, length).map(i -> 20 + (i * 37 + i / 7 + seed * 101) % 1000).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static int cached(JsonNode response) {
        return response.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue();
    }
}
