package io.strata.platform.api;

import io.strata.platform.engine.ScriptedStepRunner;
import io.strata.platform.engine.ServingEngine;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.requestlog.RequestLogWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:contract;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=contract-test-password",
        "strata.plugins.dir=target/no-plugins"})
@Import(ServingTestConfiguration.class)
class OpenAiApiContractTest {

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ServingEngine engine;
    @Autowired
    ScriptedStepRunner executor;
    @Autowired
    ObjectMapper json;
    @Autowired
    JdbcClient jdbc;
    @Autowired
    RequestLogWriter requestLog;

    WebTestClient client;
    String key;

    @BeforeEach
    void setUp() {
        client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port).responseTimeout(Duration.ofSeconds(30)).build();
        key = keys.create("contract", null).secret();
        executor.failWhenInputContains(t -> false);
        executor.stepDelay(0);
        executor.eosAfterLength(-1);
    }

    @AfterEach
    void noLeak() throws InterruptedException {
        awaitIdle();
        assertThat(engine.kvUsage().allFreeOrCached()).as("every page free or cached after all requests ended: " + engine.kvUsage()).isTrue();
    }

    private void awaitIdle() throws InterruptedException {
        for (int i = 0; i < 500 && (engine.inFlight() > 0 || engine.kvUsage().usedPages() > 0); i++) {
            Thread.sleep(10);
        }
    }

    private WebTestClient.ResponseSpec post(String path, Object body) {
        return client.post().uri(path).header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private JsonNode postJson(String path, Object body, int status) {
        byte[] bytes = post(path, body).expectStatus().isEqualTo(status).expectBody().returnResult().getResponseBody();
        return json.readTree(bytes);
    }

    private List<String> sseEvents(String path, Object body) {
        String raw = post(path, body).expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(String.class).returnResult().getResponseBody();
        List<String> events = new ArrayList<>();
        for (String block : raw.split("\n\n")) {
            if (block.isBlank()) {
                continue;
            }
            assertThat(block).startsWith("data: ");
            events.add(block.substring(6));
        }
        return events;
    }

    @Test
    void modelsListsTheServedModelWithMaxModelLen() {
        JsonNode body = json.readTree(client.get().uri("/v1/models").header("Authorization", "Bearer " + key).exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody());
        assertThat(body.get("object").stringValue()).isEqualTo("list");
        JsonNode m = body.get("data").get(0);
        assertThat(m.get("id").stringValue()).isEqualTo("dsv4-tiny-stable");
        assertThat(m.get("object").stringValue()).isEqualTo("model");
        assertThat(m.get("max_model_len").intValue()).isEqualTo(ServingTestConfiguration.MAX_MODEL_LEN);
        // the checkpoint's name, not the server's filesystem path
        assertThat(m.get("root").stringValue()).isEqualTo("dsv4-tiny-stable");
        assertThat(new String(client.get().uri("/v1/models/dsv4-tiny-stable").header("Authorization", "Bearer " + key).exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody())).doesNotContain("models/");
    }

    @Test
    void completionReturnsTextFinishReasonAndUsageWithCachedTokens() {
        JsonNode r = postJson("/v1/completions", Map.of("model", "dsv4-tiny-stable", "prompt", "def hello():",
                "max_tokens", 5, "temperature", 0), 200);
        assertThat(r.get("object").stringValue()).isEqualTo("text_completion");
        assertThat(r.get("id").stringValue()).startsWith("cmpl-");
        JsonNode choice = r.get("choices").get(0);
        assertThat(choice.get("text").stringValue()).isNotEmpty();
        assertThat(choice.get("finish_reason").stringValue()).isEqualTo("length");
        JsonNode usage = r.get("usage");
        assertThat(usage.get("completion_tokens").intValue()).isEqualTo(5);
        assertThat(usage.get("total_tokens").intValue()).isEqualTo(usage.get("prompt_tokens").intValue() + 5);
        assertThat(usage.get("prompt_tokens_details").get("cached_tokens").intValue()).isZero();
    }

    @Test
    void aGreedyChoiceReadsTheSameTokensFromTheBackendsArgmaxAsFromItsLogits() {
        // without logprobs the backend returns each row's argmax; asking for logprobs brings the rows to the sampler
        JsonNode plain = postJson("/v1/completions", Map.of("prompt", "argmax where the logits are", "max_tokens", 12,
                "temperature", 0, "ignore_eos", true), 200);
        JsonNode rows = postJson("/v1/completions", Map.of("prompt", "argmax where the logits are", "max_tokens", 12,
                "temperature", 0, "ignore_eos", true, "logprobs", 1), 200);
        String text = plain.get("choices").get(0).get("text").stringValue();
        assertThat(plain.get("usage").get("completion_tokens").intValue()).isEqualTo(12);
        assertThat(text).isEqualTo(rows.get("choices").get(0).get("text").stringValue());
        assertThat(rows.get("choices").get(0).get("logprobs").get("tokens")).hasSize(12);
    }

    @Test
    void repeatedLongPrefixIsServedFromThePrefixCache() {
        String prompt = "x = 1\n".repeat(150);
        JsonNode first = postJson("/v1/completions", Map.of("prompt", prompt, "max_tokens", 2), 200);
        JsonNode second = postJson("/v1/completions", Map.of("prompt", prompt, "max_tokens", 2), 200);
        int promptTokens = second.get("usage").get("prompt_tokens").intValue();
        int cached = second.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue();
        assertThat(first.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue()).isZero();
        assertThat(promptTokens).isGreaterThan(256);
        assertThat(cached).isPositive().isLessThan(promptTokens);
    }

    @Test
    void streamingCompletionSendsSseChunksUsageAndDone() {
        List<String> events = sseEvents("/v1/completions", Map.of("prompt", "abc", "max_tokens", 4, "stream", true,
                "temperature", 0, "stream_options", Map.of("include_usage", true)));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        JsonNode usage = json.readTree(events.get(events.size() - 2));
        assertThat(usage.get("choices")).isEmpty();
        assertThat(usage.get("usage").get("completion_tokens").intValue()).isEqualTo(4);
        assertThat(usage.get("usage").get("prompt_tokens_details").get("cached_tokens").isNumber()).isTrue();
        StringBuilder text = new StringBuilder();
        String finish = null;
        for (String e : events.subList(0, events.size() - 2)) {
            JsonNode chunk = json.readTree(e);
            assertThat(chunk.get("object").stringValue()).isEqualTo("text_completion");
            assertThat(chunk.get("usage").isNull()).isTrue();
            JsonNode c = chunk.get("choices").get(0);
            text.append(c.get("text").stringValue());
            if (!c.get("finish_reason").isNull()) {
                finish = c.get("finish_reason").stringValue();
            }
        }
        assertThat(finish).isEqualTo("length");
        JsonNode whole = postJson("/v1/completions", Map.of("prompt", "abc", "max_tokens", 4, "temperature", 0), 200);
        assertThat(text.toString()).isEqualTo(whole.get("choices").get(0).get("text").stringValue());
    }

    @Test
    void batchedPromptsGetNChoicesEachNumberedPromptMajor() {
        JsonNode tok = postJson("/tokenize", Map.of("prompt", "print(1)"), 200);
        List<Integer> ids = new ArrayList<>();
        tok.get("tokens").forEach(t -> ids.add(t.intValue()));
        List<Object> prompts = List.of("def hello():", ids);
        JsonNode r = postJson("/v1/completions", Map.of("prompt", prompts, "n", 2, "max_tokens", 3, "temperature", 0,
                "echo", true), 200);
        JsonNode choices = r.get("choices");
        assertThat(choices.size()).isEqualTo(4);
        JsonNode first = postJson("/v1/completions", Map.of("prompt", "def hello():", "max_tokens", 3, "temperature", 0), 200);
        JsonNode second = postJson("/v1/completions", Map.of("prompt", ids, "max_tokens", 3, "temperature", 0), 200);
        String a = first.get("choices").get(0).get("text").stringValue();
        String b = second.get("choices").get(0).get("text").stringValue();
        for (int i = 0; i < 4; i++) {
            JsonNode c = choices.get(i);
            assertThat(c.get("index").intValue()).isEqualTo(i);
            // choice p*n + j belongs to prompt p; echo prefixes each with its own prompt
            String text = c.get("text").stringValue();
            assertThat(text).isEqualTo(i < 2 ? "def hello():" + a : "print(1)" + b);
        }
        int promptTokens = first.get("usage").get("prompt_tokens").intValue() + ids.size();
        assertThat(r.get("usage").get("prompt_tokens").intValue()).isEqualTo(promptTokens);
        assertThat(r.get("usage").get("completion_tokens").intValue()).isEqualTo(12);

        List<String> events = sseEvents("/v1/completions", Map.of("prompt", prompts, "max_tokens", 3, "stream", true,
                "temperature", 0, "stream_options", Map.of("include_usage", true)));
        StringBuilder[] streamed = {new StringBuilder(), new StringBuilder()};
        for (String e : events.subList(0, events.size() - 2)) {
            JsonNode c = json.readTree(e).get("choices").get(0);
            streamed[c.get("index").intValue()].append(c.get("text").stringValue());
        }
        assertThat(streamed[0].toString()).isEqualTo(a);
        assertThat(streamed[1].toString()).isEqualTo(b);
        assertThat(json.readTree(events.get(events.size() - 2)).get("usage").get("prompt_tokens").intValue()).isEqualTo(promptTokens);

        JsonNode bad = postJson("/v1/completions", Map.of("prompt", List.of("ok", Map.of("x", 1))), 400).get("error");
        assertThat(bad.get("param").stringValue()).isEqualTo("prompt");
        assertThat(bad.get("message").stringValue()).contains("prompt[1]");
    }

    @Test
    void promptAsTokenIdsEchoAndLogprobs() {
        JsonNode tok = postJson("/tokenize", Map.of("prompt", "print(1)"), 200);
        List<Integer> ids = new ArrayList<>();
        tok.get("tokens").forEach(n -> ids.add(n.intValue()));
        assertThat(tok.get("count").intValue()).isEqualTo(ids.size());
        assertThat(tok.get("max_model_len").intValue()).isEqualTo(ServingTestConfiguration.MAX_MODEL_LEN);
        JsonNode r = postJson("/v1/completions", Map.of("prompt", ids, "max_tokens", 3, "echo", true, "logprobs", 2), 200);
        JsonNode c = r.get("choices").get(0);
        assertThat(c.get("text").stringValue()).startsWith("print(1)");
        JsonNode lp = c.get("logprobs");
        // prompt positions (first without a logprob) + 3 generated
        assertThat(lp.get("tokens").size()).isEqualTo(ids.size() + 3);
        assertThat(lp.get("token_logprobs").get(0).isNull()).isTrue();
        assertThat(lp.get("token_logprobs").get(ids.size()).doubleValue()).isLessThanOrEqualTo(0);
        assertThat(lp.get("top_logprobs").get(ids.size()).size()).isBetween(1, 2);
        JsonNode detok = postJson("/detokenize", Map.of("tokens", ids), 200);
        assertThat(detok.get("prompt").stringValue()).isEqualTo("<｜begin▁of▁sentence｜>print(1)");
    }

    @Test
    void promptLogprobsGiveTopKAtEveryPromptPosition() {
        JsonNode r = postJson("/v1/completions", Map.of("prompt", "a = b + c", "max_tokens", 1, "prompt_logprobs", 3), 200);
        JsonNode pl = r.get("choices").get(0).get("prompt_logprobs");
        int n = r.get("usage").get("prompt_tokens").intValue();
        assertThat(pl.size()).isEqualTo(n);
        assertThat(pl.get(0).isNull()).isTrue();
        JsonNode pos1 = pl.get(1);
        assertThat(pos1.size()).isBetween(3, 4);
        pos1.properties().forEach(e -> {
            assertThat(e.getValue().get("logprob").doubleValue()).isLessThanOrEqualTo(0);
            assertThat(e.getValue().get("rank").intValue()).isPositive();
        });
    }

    @Test
    void nChoicesWithSeedAreReproducible() {
        Map<String, Object> req = Map.of("prompt", "seed test", "max_tokens", 8, "n", 2, "temperature", 1.0, "seed", 1234);
        JsonNode a = postJson("/v1/completions", req, 200);
        JsonNode b = postJson("/v1/completions", req, 200);
        assertThat(a.get("choices").size()).isEqualTo(2);
        assertThat(a.get("choices").get(0).get("text").stringValue()).isEqualTo(b.get("choices").get(0).get("text").stringValue());
        assertThat(a.get("choices").get(1).get("text").stringValue()).isEqualTo(b.get("choices").get(1).get("text").stringValue());
        assertThat(a.get("usage").get("completion_tokens").intValue()).isEqualTo(16);
        JsonNode c = postJson("/v1/completions", Map.of("prompt", "seed test", "max_tokens", 8, "temperature", 1.0, "seed", 99), 200);
        assertThat(c.get("choices").get(0).get("text").stringValue()).isNotEqualTo(a.get("choices").get(0).get("text").stringValue());
    }

    @Test
    void stopStringEndsTheChoiceAndIsNotReturned() {
        JsonNode whole = postJson("/v1/completions", Map.of("prompt", "stop test", "max_tokens", 12, "temperature", 0), 200);
        String text = whole.get("choices").get(0).get("text").stringValue();
        String stop = text.substring(4, 6);
        JsonNode r = postJson("/v1/completions", Map.of("prompt", "stop test", "max_tokens", 12, "temperature", 0, "stop", stop), 200);
        JsonNode c = r.get("choices").get(0);
        assertThat(c.get("finish_reason").stringValue()).isEqualTo("stop");
        assertThat(c.get("stop_reason").stringValue()).isEqualTo(stop);
        assertThat(c.get("text").stringValue()).isEqualTo(text.substring(0, text.indexOf(stop)));
    }

    @Test
    void eosStopsWithFinishReasonStop() {
        executor.eosAfterLength(6);
        JsonNode r = postJson("/v1/completions", Map.of("prompt", "ab", "max_tokens", 50), 200);
        assertThat(r.get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("stop");
        assertThat(r.get("usage").get("completion_tokens").intValue()).isLessThan(50);
    }

    @Test
    void chatCompletionStreamsRoleThenContentThenFinish() {
        Map<String, Object> req = Map.of("messages", List.of(Map.of("role", "user", "content", "hi")),
                "max_tokens", 5, "stream", true, "temperature", 0);
        List<String> events = sseEvents("/v1/chat/completions", req);
        assertThat(events.getLast()).isEqualTo("[DONE]");
        JsonNode first = json.readTree(events.getFirst());
        assertThat(first.get("object").stringValue()).isEqualTo("chat.completion.chunk");
        assertThat(first.get("choices").get(0).get("delta").get("role").stringValue()).isEqualTo("assistant");
        JsonNode last = json.readTree(events.get(events.size() - 2));
        assertThat(last.get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("length");
        StringBuilder content = new StringBuilder();
        for (String e : events.subList(1, events.size() - 1)) {
            JsonNode d = json.readTree(e).get("choices").get(0).get("delta");
            if (d.has("content")) {
                content.append(d.get("content").stringValue());
            }
        }
        JsonNode whole = postJson("/v1/chat/completions", Map.of("messages", List.of(Map.of("role", "user", "content", "hi")),
                "max_tokens", 5, "temperature", 0), 200);
        assertThat(whole.get("object").stringValue()).isEqualTo("chat.completion");
        JsonNode msg = whole.get("choices").get(0).get("message");
        assertThat(msg.get("role").stringValue()).isEqualTo("assistant");
        assertThat(msg.get("content").stringValue()).isEqualTo(content.toString());
        assertThat(whole.get("usage").get("prompt_tokens_details").get("cached_tokens").isNumber()).isTrue();
    }

    @Test
    void chatThinkingModeAndLogprobs() {
        JsonNode r = postJson("/v1/chat/completions", Map.of("messages", List.of(Map.of("role", "user", "content", "why?")),
                "max_completion_tokens", 4, "logprobs", true, "top_logprobs", 2,
                "chat_template_kwargs", Map.of("thinking", true)), 200);
        JsonNode c = r.get("choices").get(0);
        // no </think> generated: everything so far is reasoning
        assertThat(c.get("message").get("reasoning_content").stringValue()).isNotEmpty();
        JsonNode lp = c.get("logprobs").get("content");
        assertThat(lp.size()).isEqualTo(4);
        assertThat(lp.get(0).get("top_logprobs").size()).isEqualTo(2);
        assertThat(lp.get(0).get("bytes").isArray()).isTrue();
    }

    @Test
    void invalidParametersAre400NamingTheParameter() {
        JsonNode e = postJson("/v1/completions", Map.of("prompt", "x", "temperature", -1), 400).get("error");
        assertThat(e.get("param").stringValue()).isEqualTo("temperature");
        assertThat(e.get("type").stringValue()).isEqualTo("BadRequestError");
        assertThat(e.get("code").intValue()).isEqualTo(400);
        assertThat(e.get("message").stringValue()).contains("temperature");
        assertThat(postJson("/v1/completions", Map.of("prompt", "x", "top_p", 2), 400).get("error").get("param").stringValue()).isEqualTo("top_p");
        assertThat(postJson("/v1/completions", Map.of("prompt", "x", "n", 0), 400).get("error").get("param").stringValue()).isEqualTo("n");
        assertThat(postJson("/v1/completions", Map.of("prompt", List.of(5000)), 400).get("error").get("param").stringValue()).isEqualTo("prompt");
        assertThat(postJson("/v1/completions", Map.of("max_tokens", 3), 400).get("error").get("param").stringValue()).isEqualTo("prompt");
        assertThat(postJson("/v1/chat/completions", Map.of("messages", List.of()), 400).get("error").get("param").stringValue()).isEqualTo("messages");
        assertThat(postJson("/v1/completions", Map.of("prompt", "x", "stream_options", Map.of("include_usage", true)), 400)
                .get("error").get("param").stringValue()).isEqualTo("stream_options");
        JsonNode malformed = json.readTree(post("/v1/completions", "{not json").expectStatus().isBadRequest()
                .expectBody().returnResult().getResponseBody());
        assertThat(malformed.get("error").get("message").stringValue()).contains("not valid JSON");
    }

    /** The chat template of the served model, as /tokenize renders it and /detokenize reads it back. */
    private String renderedPrompt(List<Map<String, String>> messages) {
        JsonNode tok = postJson("/tokenize", Map.of("messages", messages), 200);
        List<Integer> ids = new ArrayList<>();
        tok.get("tokens").forEach(t -> ids.add(t.intValue()));
        return postJson("/detokenize", Map.of("tokens", ids), 200).get("prompt").stringValue();
    }

    @Test
    void developerMessageIsAUserTurnAsInDeepSeeksEncoder() {
        String prompt = renderedPrompt(List.of(Map.of("role", "system", "content", "You are terse."),
                Map.of("role", "developer", "content", "Answer in French."),
                Map.of("role", "user", "content", "Hello")));
        assertThat(prompt).contains("You are terse.<｜User｜>Answer in French.<｜User｜>Hello<｜Assistant｜>");
    }

    @Test
    void aPromptOverSpringsDefaultBufferIsReadAndOverTheLimitIs413() {
        // 300 KB is far below the limit (at least 1 MiB, 16 bytes per token of context): the context check answers
        JsonNode longPrompt = postJson("/v1/completions", Map.of("prompt", "word ".repeat(60_000), "max_tokens", 1), 400).get("error");
        assertThat(longPrompt.get("message").stringValue()).startsWith("This model's maximum context length is 1024 tokens.");
        JsonNode longChat = postJson("/v1/chat/completions", Map.of("messages",
                List.of(Map.of("role", "user", "content", "word ".repeat(60_000)))), 400).get("error");
        assertThat(longChat.get("message").stringValue()).startsWith("This model's maximum context length is 1024 tokens.");

        String tooLarge = "{\"prompt\": \"" + "x".repeat(1024 * 1024 + 16) + "\"}";
        JsonNode e = json.readTree(post("/v1/completions", tooLarge).expectStatus().isEqualTo(413)
                .expectBody().returnResult().getResponseBody()).get("error");
        assertThat(e.get("type").stringValue()).isEqualTo("RequestTooLargeError");
        assertThat(e.get("code").intValue()).isEqualTo(413);
        assertThat(e.get("message").stringValue()).contains("1.0 MiB").contains("strata.api.max-request-size");
    }

    private JsonNode error(WebTestClient.RequestHeadersSpec<?> request, int status) {
        byte[] body = request.header("Authorization", "Bearer " + key).exchange().expectStatus().isEqualTo(status)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody().returnResult().getResponseBody();
        JsonNode e = json.readTree(body).get("error");
        assertThat(e).as(new String(body)).isNotNull();
        assertThat(e.get("code").intValue()).isEqualTo(status);
        assertThat(e.get("type").stringValue()).endsWith("Error");
        return e;
    }

    @Test
    void errorsBeforeAnyControllerUseTheOpenAiShape() {
        assertThat(error(client.get().uri("/v1/no-such-route"), 404).get("message").stringValue())
                .contains("/v1/no-such-route").contains("POST /v1/chat/completions");
        assertThat(error(client.post().uri("/v1/embeddings").contentType(MediaType.APPLICATION_JSON).bodyValue("{}"), 404)
                .get("message").stringValue()).contains("/v1/embeddings");
        assertThat(error(client.get().uri("/v1/chat/completions"), 405).get("message").stringValue())
                .isEqualTo("GET is not allowed on /v1/chat/completions; use POST.");
        assertThat(error(client.post().uri("/v1/completions").contentType(MediaType.TEXT_PLAIN).bodyValue("hello"), 415)
                .get("message").stringValue()).contains("text/plain").contains("application/json");
    }

    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void clientMistakesAreNotLoggedAsServerErrors(org.springframework.boot.test.system.CapturedOutput output) {
        post("/v1/completions", "{\"prompt\": " + "\"x".repeat(1) + "x".repeat(1024 * 1024 + 16) + "\"}").expectStatus().isEqualTo(413);
        post("/v1/chat/completions", "{oops").expectStatus().isBadRequest();
        client.get().uri("/v1/nowhere").header("Authorization", "Bearer " + key).exchange().expectStatus().isNotFound();
        client.get().uri("/v1/completions").header("Authorization", "Bearer " + key).exchange().expectStatus().isEqualTo(405);
        assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContain("Unexpected API failure")
                .doesNotContain("DataBufferLimitException");
    }

    @Test
    void malformedJsonSaysWhereWithoutParserInternals() {
        for (String path : List.of("/v1/completions", "/v1/chat/completions", "/tokenize")) {
            JsonNode e = error(client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue("{\"prompt\": \"x\",\n oops}"), 400);
            assertThat(e.get("message").stringValue()).as(path).startsWith("Request body is not valid JSON: ")
                    .contains("line 2, column").doesNotContain("REDACTED").doesNotContain("#UNKNOWN").doesNotContain("StreamReadFeature");
        }
        JsonNode badMessage = postJson("/v1/chat/completions", Map.of("messages", List.of(Map.of("role", "user", "content", 5))), 400).get("error");
        assertThat(badMessage.get("message").stringValue()).startsWith("messages[0] is malformed: ")
                .doesNotContain("REDACTED").doesNotContain("#UNKNOWN").doesNotContain("StreamReadFeature");
    }

    @Test
    void overLongPromptGetsTheMaximumContextLengthMessage() {
        JsonNode e = postJson("/v1/completions", Map.of("prompt", "word ".repeat(800), "max_tokens", 300), 400).get("error");
        assertThat(e.get("param").stringValue()).isEqualTo("input_tokens");
        assertThat(e.get("message").stringValue())
                .startsWith("This model's maximum context length is 1024 tokens. However, you requested 300 output tokens and your prompt contains ")
                .contains("Please reduce the length");
    }

    @Test
    void unknownModelIs404() {
        JsonNode e = postJson("/v1/completions", Map.of("model", "gpt-17", "prompt", "x"), 404).get("error");
        assertThat(e.get("message").stringValue()).isEqualTo("The model `gpt-17` does not exist.");
        assertThat(e.get("param").stringValue()).isEqualTo("model");
    }

    @Test
    void missingOrInvalidKeyIs401AndRevokedKeyStopsWorking() {
        JsonNode missing = json.readTree(client.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", "x")).exchange().expectStatus().isUnauthorized()
                .expectBody().returnResult().getResponseBody());
        assertThat(missing.get("error").get("code").intValue()).isEqualTo(401);
        client.post().uri("/tokenize").header("Authorization", "Bearer sk-not-a-real-key-123456")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("prompt", "x"))
                .exchange().expectStatus().isUnauthorized();
        ApiKeyService.CreatedKey k = keys.create("to-revoke", null);
        client.get().uri("/v1/models").header("Authorization", "Bearer " + k.secret()).exchange().expectStatus().isOk();
        keys.revoke(k.key().id());
        client.get().uri("/v1/models").header("Authorization", "Bearer " + k.secret()).exchange().expectStatus().isUnauthorized();
    }

    @Test
    void keyOverItsRateLimitGets429() {
        ApiKeyService.CreatedKey limited = keys.create("limited", 3);
        for (int i = 0; i < 3; i++) {
            client.get().uri("/v1/models").header("Authorization", "Bearer " + limited.secret()).exchange().expectStatus().isOk();
        }
        JsonNode e = json.readTree(client.get().uri("/v1/models").header("Authorization", "Bearer " + limited.secret())
                .exchange().expectStatus().isEqualTo(429).expectHeader().exists("Retry-After")
                .expectBody().returnResult().getResponseBody());
        assertThat(e.get("error").get("type").stringValue()).isEqualTo("RateLimitError");
        assertThat(e.get("error").get("code").intValue()).isEqualTo(429);
    }

    @Test
    void fullQueueIs503() throws InterruptedException {
        executor.stepDelay(50);
        List<reactor.core.Disposable> holders = new ArrayList<>();
        WebTestClient slow = client.mutate().responseTimeout(Duration.ofSeconds(60)).build();
        for (int i = 0; i < 6; i++) {
            holders.add(Flux.from(org.springframework.web.reactive.function.client.WebClient.create("http://localhost:" + port)
                    .post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("prompt", "hold " + i, "max_tokens", 200, "stream", true))
                    .retrieve().bodyToFlux(String.class)).subscribe());
        }
        for (int i = 0; i < 300 && engine.inFlight() < 6; i++) {
            Thread.sleep(10);
        }
        assertThat(engine.inFlight()).isEqualTo(6);
        JsonNode e = json.readTree(slow.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("prompt", "one too many"))
                .exchange().expectStatus().isEqualTo(503).expectBody().returnResult().getResponseBody());
        assertThat(e.get("error").get("message").stringValue()).contains("queue is full");
        holders.forEach(reactor.core.Disposable::dispose);
        executor.stepDelay(0);
    }

    @Test
    void clientDisconnectAbortsAndFreesPages() throws InterruptedException {
        executor.stepDelay(20);
        AtomicReference<String> first = new AtomicReference<>();
        reactor.core.Disposable d = org.springframework.web.reactive.function.client.WebClient.create("http://localhost:" + port)
                .post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", "a long prompt that takes pages ".repeat(4), "max_tokens", 400, "stream", true))
                .retrieve().bodyToFlux(String.class).doOnNext(s -> first.compareAndSet(null, s)).subscribe();
        for (int i = 0; i < 500 && first.get() == null; i++) {
            Thread.sleep(10);
        }
        assertThat(first.get()).isNotNull();
        assertThat(engine.kvUsage().usedPages()).isPositive();
        d.dispose();
        for (int i = 0; i < 500 && engine.kvUsage().usedPages() > 0; i++) {
            Thread.sleep(10);
        }
        assertThat(engine.kvUsage().usedPages()).isZero();
        assertThat(engine.inFlight()).isZero();
        executor.stepDelay(0);
    }

    @Test
    void backendFailureMidStreamIsAnSseErrorThenDoneAndTheServerKeepsServing() {
        JsonNode probe = postJson("/v1/completions", Map.of("prompt", "boom", "max_tokens", 3, "temperature", 0), 200);
        String text = probe.get("choices").get(0).get("text").stringValue();
        int poison = json.readTree(post("/tokenize", Map.of("prompt", text.substring(1, 2))).expectBody()
                .returnResult().getResponseBody()).get("tokens").get(1).intValue();
        executor.failWhenInputContains(t -> t == poison);
        List<String> events = sseEvents("/v1/completions", Map.of("prompt", "boom", "max_tokens", 10, "stream", true, "temperature", 0));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        JsonNode err = json.readTree(events.get(events.size() - 2));
        assertThat(err.get("error").get("message").stringValue()).contains("scripted backend failure");
        executor.failWhenInputContains(t -> false);
        postJson("/v1/completions", Map.of("prompt", "still alive", "max_tokens", 2), 200);
        client.get().uri("/health").exchange().expectStatus().isOk();
    }

    @Test
    void healthAndVersionArePublic() {
        client.get().uri("/health").exchange().expectStatus().isOk();
        JsonNode v = json.readTree(client.get().uri("/version").exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody());
        assertThat(v.get("version").stringValue()).isNotBlank();
    }

    @Test
    void everyRequestIsLoggedWithoutPromptText() throws InterruptedException {
        postJson("/v1/completions", Map.of("prompt", "secret prompt text", "max_tokens", 2), 200);
        postJson("/v1/completions", Map.of("prompt", "x", "temperature", 9000), 400);
        assertThat(requestLog.awaitDrained(5000)).isTrue();
        List<Map<String, Object>> rows = jdbc.sql("SELECT * FROM request_log ORDER BY created_at DESC LIMIT 2").query().listOfRows();
        assertThat(rows).hasSize(2);
        Map<String, Object> ok = rows.stream().filter(r -> ((Number) r.get("HTTP_STATUS")).intValue() == 200).findFirst().orElseThrow();
        assertThat(ok.get("COMPLETION_TOKENS")).isEqualTo(2);
        assertThat(ok.get("FINISH_REASON")).isEqualTo("length");
        assertThat(ok.get("API_KEY_ID")).isNotNull();
        assertThat(ok.get("PROMPT_TEXT")).isNull();
        Map<String, Object> bad = rows.stream().filter(r -> ((Number) r.get("HTTP_STATUS")).intValue() == 400).findFirst().orElseThrow();
        assertThat((String) bad.get("ERROR")).contains("temperature");
    }
}
