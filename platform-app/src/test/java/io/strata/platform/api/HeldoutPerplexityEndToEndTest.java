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
import java.util.Arrays;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The trained demo model end to end on the CPU backend: the real server, the held-out snippet (the first
 * {@link #SNIPPET_TOKENS} tokens of the card's held-out text, BOS first, as {@link PerplexityDefinition} cuts a
 * chunk) sent to {@code /v1/completions} with {@code prompt_logprobs}, perplexity computed from the returned
 * logprobs. It must be below the card's held-out perplexity × {@code strata.test.heldout.factor} (default
 * {@value #DEFAULT_FACTOR}: a snippet is harder or easier than the whole file, and Strata's kernels round
 * differently from the trainer's), and far below the uniform distribution's (the vocabulary size): below
 * vocab × {@code strata.test.heldout.uniform-fraction} (default {@value #DEFAULT_UNIFORM_FRACTION}).
 *
 * <p>The model folder is {@code strata.test.heldout.model} (default {@code <strata.models.dir>/dsv4-demo}); the
 * test is skipped, saying why, while that folder has no {@code model_card.json}. For an FP8/FP4 checkpoint the
 * card's {@code heldout_perplexity_quantized} is the reference.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:heldout-e2e;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=heldout-e2e-test-password",
        "strata.api.auth=none",
        "strata.backend=cpu"})
@ExtendWith(HeldoutPerplexityEndToEndTest.NeedsATrainedModel.class)
class HeldoutPerplexityEndToEndTest {
    static final int SNIPPET_TOKENS = 256;
    static final double DEFAULT_FACTOR = 1.25;
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
    void theHeldOutSnippetIsPredictedAboutAsWellAsTheTrainerMeasured() throws IOException {
        Path dir = modelDir();
        TrainingCard card = TrainingCard.read(dir).orElseThrow();
        boolean quantized = ModelConfigParser.parse(dir.resolve("config.json")).quantized();
        Double reference = card.heldoutPerplexity(quantized);
        assertThat(reference).as("the card's " + (quantized ? "heldout_perplexity_quantized" : "heldout_perplexity"))
                .isNotNull().isPositive();
        Path heldout = card.heldoutPath(dir).orElse(dir.resolve("heldout.txt"));
        int[] snippet;
        int vocab;
        try (ModelTokenizer tokenizer = ModelTokenizer.load(dir)) {
            int[] text = tokenizer.encode(Files.readString(heldout));
            snippet = PerplexityDefinition.chunks(Arrays.copyOf(text, Math.min(text.length, SNIPPET_TOKENS - 1))).getFirst();
            vocab = tokenizer.vocabSize();
        }
        assertThat(snippet.length).as("held-out tokens in " + heldout).isGreaterThan(16);

        JsonNode response = JsonMapper.shared().readTree(WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofMinutes(5)).build()
                .post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", dir.getFileName().toString(), "prompt", snippet, "max_tokens", 1,
                        "temperature", 0, "prompt_logprobs", 0))
                .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody());
        JsonNode entries = response.get("choices").get(0).get("prompt_logprobs");
        assertThat(entries.size()).isEqualTo(snippet.length);
        assertThat(entries.get(0).isNull()).as("nothing predicts the first token").isTrue();
        double[] logprobs = new double[snippet.length];
        for (int p = 1; p < snippet.length; p++) {
            // each entry maps token ids to {logprob, rank, decoded_token}; the prompt's own token is always there
            logprobs[p] = entries.get(p).get(Integer.toString(snippet[p])).get("logprob").asDouble();
        }
        PerplexityDefinition.Score score = PerplexityDefinition.Score.NONE.plusChunk(logprobs);

        double factor = Double.parseDouble(System.getProperty("strata.test.heldout.factor", Double.toString(DEFAULT_FACTOR)));
        double fraction = Double.parseDouble(System.getProperty("strata.test.heldout.uniform-fraction",
                Double.toString(DEFAULT_UNIFORM_FRACTION)));
        System.out.printf("held-out snippet of %s: %d tokens scored, mean NLL %.4f, perplexity %.3f; card %.3f x %.2f = %.3f;"
                        + " uniform %d x %.2f = %.1f%n", dir.getFileName(), score.tokens(), score.meanNll(),
                score.perplexity(), reference, factor, reference * factor, vocab, fraction, vocab * fraction);
        assertThat(score.perplexity()).as("perplexity against the card's figure").isLessThan(reference * factor);
        assertThat(score.perplexity()).as("perplexity against the uniform distribution over %d tokens", vocab)
                .isLessThan(vocab * fraction);
    }
}
