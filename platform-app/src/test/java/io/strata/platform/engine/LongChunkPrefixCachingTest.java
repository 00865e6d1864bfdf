package io.strata.platform.engine;

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
import java.util.Arrays;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Long prefill chunks keep prefix hits at every 256-position boundary, on the real CPU backend: with the
 * default chunk cap (the whole step budget) a 1,100-token prompt is prefilled in one chunk, and a later
 * request sharing 900 of its tokens resumes at 768; the same prompt again resumes at 1,024 and produces the
 * same tokens and logprobs as its cold run.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:long-chunk-prefix;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=long-chunk-test-password",
        "strata.model.max-model-len=2048",
        "strata.scheduler.max-num-batched-tokens=2048"})
class LongChunkPrefixCachingTest {
    private static final Path PLUGINS = Path.of("target/long-chunk-plugins");

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, PLUGINS);
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ObjectMapper json;

    @Test
    void longChunksHitAtEveryBoundaryWithUnchangedOutputs() {
        String key = keys.create("long-chunk", null).secret();
        WebTestClient c = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofMinutes(5)).build();
        int[] prompt = IntStream.range(0, 1100).map(i -> 3 + (i * 37 + i / 7) % 1000).toArray();
        int[] sharing = Arrays.copyOf(prompt, 1100);
        for (int i = 900; i < sharing.length; i++) {
            sharing[i] = 5 + (i * 11) % 900;
        }

        JsonNode cold = complete(c, key, prompt);
        assertThat(cached(cold)).isZero();
        assertThat(cached(complete(c, key, sharing))).isEqualTo(768);
        JsonNode warm = complete(c, key, prompt);
        assertThat(cached(warm)).isEqualTo(1024);
        JsonNode coldChoice = cold.get("choices").get(0);
        JsonNode warmChoice = warm.get("choices").get(0);
        assertThat(warmChoice.get("text").stringValue()).isEqualTo(coldChoice.get("text").stringValue());
        assertThat(warmChoice.get("logprobs").get("token_logprobs").toString())
                .isEqualTo(coldChoice.get("logprobs").get("token_logprobs").toString());
    }

    private JsonNode complete(WebTestClient c, String key, int[] prompt) {
        Map<String, Object> req = Map.of("prompt", prompt, "max_tokens", 6,
                "temperature", 0.0, "logprobs", 1);
        return json.readTree(c.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(req).exchange().expectStatus().isOk()
                .expectBody().returnResult().getResponseBody());
    }

    private static int cached(JsonNode response) {
        return response.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt();
    }
}
