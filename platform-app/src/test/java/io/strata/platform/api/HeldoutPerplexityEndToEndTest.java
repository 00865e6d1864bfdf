package io.strata.platform.api;

import io.strata.model.config.ModelConfigParser;
import io.strata.platform.engine.TrainingCard;
import io.strata.platform.plugins.PluginJars;
import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.platform.tools.PerplexityDefinition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The trained demo model end to end on the CPU backend: the real server, the card's whole held-out text cut as
 * {@link PerplexityDefinition} cuts it (chunks of at most 1,024 tokens, BOS first), each chunk sent to
 * {@code /v1/completions} with {@code prompt_logprobs}, the perplexity computed from the returned logprobs. It
 * must be within {@code strata.test.heldout.tolerance} (default {@value #DEFAULT_TOLERANCE}, relative) of the
 * card's figure — what the training script measured on the same text in its exact mode (Strata's CPU backend
 * agrees within 0.1%, docs/model-card.md) — and far below the uniform distribution's (the vocabulary size):
 * below vocab × {@code strata.test.heldout.uniform-fraction} (default {@value #DEFAULT_UNIFORM_FRACTION}).
 *
 * <p>The model folder is {@code strata.test.heldout.model} (default {@code <strata.models.dir>/dsv4-demo}); the
 * test is skipped, saying why, while that folder has no {@code model_card.json}. For an FP8/FP4 checkpoint the
 * card's {@code heldout.fp8.perplexity} is the reference.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:heldout-e2e;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=heldout-e2e-test-password",
        "strata.api.auth=none",
        "strata.backend=cpu"})
@ExtendWith(HeldoutPerplexityEndToEndTest.NeedsATrainedModel.class)
class HeldoutPerplexityEndToEndTest {
    static final double DEFAULT_TOLERANCE = 0.01;
    static final double DEFAULT_UNIFORM_FRACTION = 0.1;

    static Path modelDir() {
        String configured = System.getProperty("strata.test.heldout.model");
        return (configured != null && !configured.isBlank() ? Path.of(configured)
                : Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-demo")).toAbsolutePath().normalize();
    }

    /**
     * Skips the class, with the reason, before Spring starts a server on a folder that may not exist (an assumption
     * in {@code @BeforeAll} would skip it too, but surefire then reports no test and no reason).
     */
    static final class NeedsATrainedModel implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Path card = modelDir().resolve(TrainingCard.FILE_NAME);
            return Files.isRegularFile(card) ? ConditionEvaluationResult.enabled("model card at " + card)
                    : ConditionEvaluationResult.disabled("no trained model to check: " + card + " does not exist (train "
                    + "it with tools/train-demo, or point -Dstrata.test.heldout.model at a model folder with a card)");
        }
    }

    @DynamicPropertySource
    static void served(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target/heldout-e2e-plugins"));
        registry.add("strata.model.path", () -> modelDir().toString());
    }

    @LocalServerPort
    int port;

    @Test
    void theServedModelPredictsTheHeldOutTextAsWellAsTheTrainerMeasured() throws IOException {
        Path dir = modelDir();
        TrainingCard card = TrainingCard.read(dir).orElseThrow();
        boolean quantized = ModelConfigParser.parse(dir.resolve("config.json")).quantized();
        Double reference = card.heldoutPerplexity(quantized);
        assertThat(reference).as("the card's " + (quantized ? "heldout.fp8.perplexity" : "heldout.bf16.perplexity"))
                .isNotNull().isPositive();
        Path heldout = card.heldoutPath(dir).orElse(dir.resolve("heldout.txt"));
        List<int[]> chunks;
        int vocab;
        try (ModelTokenizer tokenizer = ModelTokenizer.load(dir)) {
            chunks = PerplexityDefinition.chunks(tokenizer.encode(Files.readString(heldout)));
            vocab = tokenizer.vocabSize();
        }
        assertThat(chunks).as("held-out chunks of " + heldout).isNotEmpty();

        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofMinutes(5)).build();
        PerplexityDefinition.Score score = PerplexityDefinition.Score.NONE;
        for (int[] chunk : chunks) {
            JsonNode response = JsonMapper.shared().readTree(client.post().uri("/v1/completions")
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("model", dir.getFileName().toString(), "prompt", chunk, "max_tokens", 1,
                            "temperature", 0, "prompt_logprobs", 0))
                    .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody());
            JsonNode entries = response.get("choices").get(0).get("prompt_logprobs");
            assertThat(entries.size()).isEqualTo(chunk.length);
            assertThat(entries.get(0).isNull()).as("nothing predicts the first token").isTrue();
            double[] logprobs = new double[chunk.length];
            for (int p = 1; p < chunk.length; p++) {
                // each entry maps token ids to {logprob, rank, decoded_token}; the prompt's own token is always there
                logprobs[p] = entries.get(p).get(Integer.toString(chunk[p])).get("logprob").asDouble();
            }
            score = score.plusChunk(logprobs);
        }

        double tolerance = Double.parseDouble(System.getProperty("strata.test.heldout.tolerance",
                Double.toString(DEFAULT_TOLERANCE)));
        double fraction = Double.parseDouble(System.getProperty("strata.test.heldout.uniform-fraction",
                Double.toString(DEFAULT_UNIFORM_FRACTION)));
        System.out.printf("held-out text of %s through the API: %d tokens in %d chunks, mean NLL %.4f, perplexity %.4f;"
                        + " card %.4f (%+.2f %%); uniform %d x %.2f = %.1f%n", dir.getFileName(), score.tokens(),
                chunks.size(), score.meanNll(), score.perplexity(), reference,
                100 * (score.perplexity() / reference - 1), vocab, fraction, vocab * fraction);
        assertThat(score.perplexity()).as("perplexity against the card's figure")
                .isBetween(reference * (1 - tolerance), reference * (1 + tolerance));
        assertThat(score.perplexity()).as("perplexity against the uniform distribution over %d tokens", vocab)
                .isLessThan(vocab * fraction);
    }
}
