package io.strata.platform.api;

import io.strata.platform.engine.EngineProperties;
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
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a response contains must not depend on what the prefix cache holds, on the real CPU backend over
 * real HTTP: prompt logprobs ({@code prompt_logprobs}, and {@code echo} with {@code logprobs}) have an entry
 * for every prompt position, bit-identical whether the cache is cold or warm, the prompt chunked or not,
 * the request alone or batched with others sharing its prefix; the logprobs of the tokens generated after a
 * cached prompt are identical too, and {@code cached_tokens} reports only what was reused. Each test uses
 * its own prompts, so the tests do not warm each other's cache.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:prompt-logprobs-cache;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=prompt-logprobs-test-password",
        "strata.model.max-model-len=2048",
        "strata.scheduler.max-num-batched-tokens=2048"})
class PromptLogprobsPrefixCacheTest {
    private static final Path PLUGINS = Path.of("target/prompt-logprobs-plugins");
    private static final int BODY_LIMIT = 16 * 1024 * 1024;

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, PLUGINS);
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    InferenceEngine inference;
    @Autowired
    ObjectMapper json;

    ServingEngine engine;
    WebTestClient client;
    String key;

    @BeforeEach
    void setUp() {
        engine = (ServingEngine) inference;
        // a scored prompt is a large body: about 150 bytes per position and choice
        client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(BODY_LIMIT))
                .responseTimeout(Duration.ofMinutes(5)).build();
        key = keys.create("prompt-logprobs", null).secret();
    }

    @Test
    void promptLogprobsAreCompleteAndIdenticalWithAColdOrWarmCache() {
        int[] prompt = prompt(700, 1);
        Map<String, Object> scoring = Map.of("prompt", prompt, "prompt_logprobs", 2, "logprobs", 2,
                "max_tokens", 3, "temperature", 0.0);

        JsonNode cold = completions(scoring);
        assertThat(cached(cold)).isZero();
        assertCompletePromptLogprobs(cold.get("choices").get(0).get("prompt_logprobs"), prompt);

        // the scoring request published its blocks: a plain request reuses them, with the same output
        JsonNode plain = completions(Map.of("prompt", prompt, "logprobs", 2, "max_tokens", 3, "temperature", 0.0));
        assertThat(cached(plain)).isEqualTo(512);
        assertSameOutput(plain, cold);

        JsonNode warm = completions(scoring);
        assertThat(cached(warm)).as("nothing of the prompt was reused").isZero();
        assertThat(promptLogprobs(warm, 0)).isEqualTo(promptLogprobs(cold, 0));
        assertSameOutput(warm, cold);
        assertThat(warm.get("usage").toString()).isEqualTo(cold.get("usage").toString());
    }

    @Test
    void echoWithLogprobsCoversTheWholePromptWhateverTheCacheHolds() {
        int[] prompt = prompt(600, 2);
        Map<String, Object> echo = Map.of("prompt", prompt, "echo", true, "logprobs", 1, "max_tokens", 2,
                "temperature", 0.0);

        JsonNode cold = completions(echo);
        JsonNode coldLp = cold.get("choices").get(0).get("logprobs");
        assertThat(coldLp.get("tokens").size()).isEqualTo(prompt.length + 2);
        assertThat(coldLp.get("token_logprobs").get(0).isNull()).isTrue();
        for (int i = 1; i < prompt.length + 2; i++) {
            assertThat(coldLp.get("token_logprobs").get(i).isNumber()).as("position " + i).isTrue();
        }

        assertThat(cached(completions(Map.of("prompt", prompt, "max_tokens", 2, "temperature", 0.0)))).isEqualTo(512);
        JsonNode warm = completions(echo);
        assertThat(cached(warm)).isZero();
        assertThat(warm.get("choices").get(0).toString()).isEqualTo(cold.get("choices").get(0).toString());

        // streamed: the first chunk carries the prompt's entries, the rest the generated tokens
        Map<String, Object> streamed = new HashMap<>(echo);
        streamed.put("stream", true);
        streamed.put("stream_options", Map.of("include_usage", true));
        List<JsonNode> chunks = stream("/v1/completions", streamed);
        List<String> tokenLogprobs = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (JsonNode chunk : chunks.subList(0, chunks.size() - 1)) {
            JsonNode c = chunk.get("choices").get(0);
            text.append(c.get("text").stringValue());
            if (c.path("logprobs").isObject()) {
                c.get("logprobs").get("token_logprobs").forEach(v -> tokenLogprobs.add(v.toString()));
            }
        }
        List<String> expected = new ArrayList<>();
        coldLp.get("token_logprobs").forEach(v -> expected.add(v.toString()));
        assertThat(tokenLogprobs).isEqualTo(expected);
        assertThat(text.toString()).isEqualTo(cold.get("choices").get(0).get("text").stringValue());
        assertThat(cached(chunks.getLast())).isZero();
    }

    @Test
    void chatPromptLogprobsAreCompleteAndIdenticalWithAColdOrWarmCache() {
        StringBuilder content = new StringBuilder();
        for (int i = 0; i < 90; i++) {
            content.append("def f").append(i).append("(x): return x * ").append(i % 7).append('\n');
        }
        Map<String, Object> scoring = Map.of("messages", List.of(Map.of("role", "user", "content", content.toString())),
                "prompt_logprobs", 1, "logprobs", true, "top_logprobs", 2, "max_tokens", 3, "temperature", 0.0);

        JsonNode cold = post("/v1/chat/completions", scoring);
        int promptTokens = cold.get("usage").get("prompt_tokens").intValue();
        assertThat(promptTokens).isGreaterThan(512);
        assertThat(cached(cold)).isZero();
        JsonNode coldPrompt = cold.get("prompt_logprobs");
        assertThat(coldPrompt.size()).isEqualTo(promptTokens);
        assertThat(coldPrompt.get(0).isNull()).isTrue();
        for (int i = 1; i < promptTokens; i++) {
            assertThat(coldPrompt.get(i).isObject()).as("position " + i).isTrue();
        }

        JsonNode plain = post("/v1/chat/completions", Map.of("messages", scoring.get("messages"),
                "logprobs", true, "top_logprobs", 2, "max_tokens", 3, "temperature", 0.0));
        assertThat(cached(plain)).isEqualTo(promptTokens - 1 - (promptTokens - 1) % 256);
        assertThat(plain.get("choices").toString()).isEqualTo(cold.get("choices").toString());

        JsonNode warm = post("/v1/chat/completions", scoring);
        assertThat(cached(warm)).isZero();
        assertThat(warm.get("prompt_logprobs").toString()).isEqualTo(coldPrompt.toString());
        assertThat(warm.get("choices").toString()).isEqualTo(cold.get("choices").toString());
    }

    @Test
    void chunkedPrefillGivesTheSamePromptLogprobsColdAndWarm() {
        int[] prompt = prompt(650, 4);
        Map<String, Object> scoring = Map.of("prompt", prompt, "prompt_logprobs", 3, "logprobs", 3, "max_tokens", 2,
                "temperature", 0.0);
        EngineProperties limits = engine.limits();
        JsonNode coldChunked;
        JsonNode warmChunked;
        try {
            // 100-token chunks: the prompt takes seven steps, its logits arriving chunk by chunk
            engine.applyLimits(new EngineProperties(limits.maxNumBatchedTokens(), limits.maxNumSeqs(),
                    limits.maxQueuedRequests(), limits.maxQueuedTokens(), limits.policy(), 100));
            coldChunked = completions(scoring);
            assertThat(cached(completions(Map.of("prompt", prompt, "max_tokens", 1)))).isEqualTo(512);
            warmChunked = completions(scoring);
        } finally {
            engine.applyLimits(limits);
        }
        JsonNode warmWhole = completions(scoring);

        assertCompletePromptLogprobs(coldChunked.get("choices").get(0).get("prompt_logprobs"), prompt);
        for (JsonNode r : List.of(warmChunked, warmWhole)) {
            assertThat(cached(r)).isZero();
            assertThat(promptLogprobs(r, 0)).isEqualTo(promptLogprobs(coldChunked, 0));
            assertSameOutput(r, coldChunked);
        }
    }

    @Test
    void concurrentRequestsSharingAPrefixAllGetTheirWholePromptScored() {
        int[] prefix = prompt(600, 6);
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] p = Arrays.copyOf(prefix, 650);
            int[] suffix = prompt(50, 60 + i);
            System.arraycopy(suffix, 0, p, 600, 50);
            prompts.add(p);
        }
        JsonNode alone = completions(scoring(prompts.getFirst()));
        assertCompletePromptLogprobs(alone.get("choices").get(0).get("prompt_logprobs"), prompts.getFirst());

        // four scoring requests and two plain ones at once, after the shared prefix is cached
        AtomicInteger maxRunning = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        Thread watcher = Thread.ofVirtual().start(() -> {
            while (!done.get()) {
                maxRunning.accumulateAndGet(engine.runningCount(), Math::max);
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        WebClient web = WebClient.builder().baseUrl("http://localhost:" + port)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(BODY_LIMIT)).build();
        List<JsonNode> results = Flux.range(0, prompts.size())
                .flatMapSequential(i -> web.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(i < 4 ? scoring(prompts.get(i)) : Map.of("prompt", prompts.get(i), "max_tokens", 2,
                                "logprobs", 1, "temperature", 0.0))
                        .retrieve().bodyToMono(String.class).map(json::readTree))
                .collectList().block(Duration.ofMinutes(5));
        done.set(true);
        watcher.interrupt();
        assertThat(maxRunning.get()).as("requests ran together").isGreaterThan(1);

        List<String> alonePositions = entries(alone.get("choices").get(0).get("prompt_logprobs"));
        for (int i = 0; i < 4; i++) {
            JsonNode r = results.get(i);
            assertThat(cached(r)).isZero();
            JsonNode pl = r.get("choices").get(0).get("prompt_logprobs");
            assertCompletePromptLogprobs(pl, prompts.get(i));
            // the shared prefix scores the same in every request
            assertThat(entries(pl).subList(0, 600)).as("request " + i).isEqualTo(alonePositions.subList(0, 600));
        }
        assertThat(results.getFirst().get("choices").toString()).isEqualTo(alone.get("choices").toString());
        for (int i = 4; i < 6; i++) {
            assertThat(cached(results.get(i))).as("plain request " + i).isEqualTo(512);
        }
    }

    @Test
    void nChoicesAndBatchedPromptsEachGetTheWholePromptScored() {
        int[] a = prompt(600, 7);
        int[] b = prompt(550, 8);
        JsonNode aloneA = completions(Map.of("prompt", a, "prompt_logprobs", 2, "logprobs", 2, "max_tokens", 2,
                "temperature", 0.0));

        Map<String, Object> batch = Map.of("prompt", List.of(a, b), "n", 2, "prompt_logprobs", 2, "logprobs", 2,
                "max_tokens", 2, "temperature", 0.0);
        JsonNode first = completions(batch);
        JsonNode again = completions(batch);
        for (JsonNode r : List.of(first, again)) {
            JsonNode choices = r.get("choices");
            assertThat(choices.size()).isEqualTo(4);
            assertThat(cached(r)).isZero();
            assertThat(r.get("usage").get("prompt_tokens").intValue()).isEqualTo(a.length + b.length);
            for (int i = 0; i < 4; i++) {
                assertCompletePromptLogprobs(choices.get(i).get("prompt_logprobs"), i < 2 ? a : b);
            }
            assertThat(promptLogprobs(r, 0)).isEqualTo(promptLogprobs(aloneA, 0));
            assertThat(promptLogprobs(r, 1)).isEqualTo(promptLogprobs(aloneA, 0));
            assertThat(promptLogprobs(r, 3)).isEqualTo(promptLogprobs(r, 2));
            assertThat(promptLogprobs(r, 2)).isEqualTo(promptLogprobs(first, 2));
            assertThat(choices.get(1).get("logprobs").toString()).isEqualTo(aloneA.get("choices").get(0).get("logprobs").toString());
        }
    }

    @Test
    void aFullyCachedPromptChangesNeitherTheFirstTokensNorEcho() {
        // 513 tokens: a warm run takes everything but the last prompt token from the cache
        int[] prompt = prompt(513, 9);
        Map<String, Object> plain = Map.of("prompt", prompt, "logprobs", 5, "max_tokens", 4, "temperature", 0.0);
        JsonNode cold = completions(plain);
        JsonNode warm = completions(plain);
        assertThat(cached(cold)).isZero();
        assertThat(cached(warm)).isEqualTo(512);
        assertThat(warm.get("choices").toString()).isEqualTo(cold.get("choices").toString());
        assertThat(warm.get("usage").get("prompt_tokens").intValue()).isEqualTo(513);
        assertThat(warm.get("usage").get("completion_tokens").intValue()).isEqualTo(4);

        // echo without logprobs needs no prompt logits: it still reuses the cache
        String promptText = post("/detokenize", Map.of("tokens", prompt)).get("prompt").stringValue();
        String completion = cold.get("choices").get(0).get("text").stringValue();
        JsonNode echoed = completions(Map.of("prompt", prompt, "echo", true, "max_tokens", 4, "temperature", 0.0));
        assertThat(cached(echoed)).isEqualTo(512);
        assertThat(echoed.get("choices").get(0).get("text").stringValue()).isEqualTo(promptText + completion);

        // echo with logprobs scores the whole prompt, then the same four tokens as the cold run
        JsonNode scored = completions(Map.of("prompt", prompt, "echo", true, "logprobs", 5, "max_tokens", 4,
                "temperature", 0.0));
        assertThat(cached(scored)).isZero();
        JsonNode lp = scored.get("choices").get(0).get("logprobs");
        JsonNode coldLp = cold.get("choices").get(0).get("logprobs");
        assertThat(lp.get("tokens").size()).isEqualTo(513 + 4);
        for (String field : List.of("tokens", "token_logprobs", "top_logprobs")) {
            List<String> tail = entries(lp.get(field)).subList(513, 517);
            assertThat(tail).as(field).isEqualTo(entries(coldLp.get(field)));
        }
        assertThat(scored.get("choices").get(0).get("text").stringValue()).isEqualTo(promptText + completion);
    }

    private static Map<String, Object> scoring(int[] prompt) {
        return Map.of("prompt", prompt, "prompt_logprobs", 1, "logprobs", 1, "max_tokens", 2, "temperature", 0.0);
    }

    /** Deterministic ids of ordinary tokens; a different {@code seed} gives a different sequence from the start. */
    private static int[] prompt(int length, int seed) {
        return IntStream.range(0, length).map(i -> 20 + (i * 37 + i / 7 + seed * 101) % 1000).toArray();
    }

    private static void assertCompletePromptLogprobs(JsonNode pl, int[] prompt) {
        assertThat(pl.size()).as("one entry per prompt position").isEqualTo(prompt.length);
        assertThat(pl.get(0).isNull()).isTrue();
        for (int i = 1; i < prompt.length; i++) {
            JsonNode e = pl.get(i);
            assertThat(e.isObject()).as("position " + i).isTrue();
            assertThat(e.has(Integer.toString(prompt[i]))).as("position " + i + " scores its own token").isTrue();
        }
    }

    private static String promptLogprobs(JsonNode response, int choice) {
        return response.get("choices").get(choice).get("prompt_logprobs").toString();
    }

    private static List<String> entries(JsonNode pl) {
        List<String> out = new ArrayList<>();
        pl.forEach(e -> out.add(e.toString()));
        return out;
    }

    /** Same generated text, logprobs and finish reason. */
    private static void assertSameOutput(JsonNode r, JsonNode reference) {
        JsonNode c = r.get("choices").get(0);
        JsonNode ref = reference.get("choices").get(0);
        assertThat(c.get("text").stringValue()).isEqualTo(ref.get("text").stringValue());
        assertThat(c.get("logprobs").toString()).isEqualTo(ref.get("logprobs").toString());
        assertThat(c.get("finish_reason").toString()).isEqualTo(ref.get("finish_reason").toString());
    }

    private JsonNode completions(Map<String, Object> body) {
        return post("/v1/completions", body);
    }

    private JsonNode post(String path, Map<String, Object> body) {
        return json.readTree(client.post().uri(path).header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isOk()
                .expectBody().returnResult().getResponseBody());
    }

    /** The SSE events of a streamed request, without {@code [DONE]}. */
    private List<JsonNode> stream(String path, Map<String, Object> body) {
        String raw = client.post().uri(path).header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        List<JsonNode> events = new ArrayList<>();
        for (String block : raw.split("\n\n")) {
            if (block.isBlank()) {
                continue;
            }
            assertThat(block).startsWith("data: ");
            String data = block.substring(6);
            if (!data.equals("[DONE]")) {
                events.add(json.readTree(data));
            }
        }
        return events;
    }

    private static int cached(JsonNode response) {
        return response.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue();
    }
}
