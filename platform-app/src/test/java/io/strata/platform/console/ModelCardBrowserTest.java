package io.strata.platform.console;

import io.strata.platform.config.PlatformHome;
import io.strata.platform.config.TestPlatform;
import io.strata.platform.engine.TrainingCard;
import io.strata.platform.tokenizer.TestModels;
import io.strata.platform.web.Browser;
import io.strata.platform.web.BrowserTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Model page of a model that comes with a training card ({@code model_card.json}): a person sees what the
 * model is — kind, size, layers, data and licence, training, held-out perplexity — and the console's JSON says
 * the same. The model is the tiny fixture's weights and tokenizer in a folder of its own, without the fixture
 * manifest, plus a card written here; it is served for real on the CPU backend. The fixture without a card is
 * {@link ConsoleBrowserTest#modelPageShowsScheduleLayoutAndPlanner}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ModelCardBrowserTest extends BrowserTest {
    static final PlatformHome HOME = PlatformHome.temp("strata-model-card-");
    static final String CARD = """
            {"name": "dsv4-card-test", "description": "trained demo: a card for the browser test", "parameters": 8912896,
             "layers": ["window", "c4a", "c128a", "c4a", "c128a", "c4a", "window"],
             "data": {"source": "a test text", "licence": "CC0-1.0"}, "tokens_trained": 52428800,
             "train_minutes": 42.2, "device": "NVIDIA H200", "final_train_loss": 1.875,
             "heldout": {"text_file": "heldout.txt",
                         "definition": "exp of the mean NLL of every token after the first of each chunk",
                         "bf16": {"perplexity": 7.251}, "fp8": {"perplexity": 7.399}},
             "date": "2026-12-01", "a_field_from_the_future": [1, 2, 3]}""";

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        HOME.register(registry);
        String model = modelWithCard(HOME.resolve("dsv4-card-test")).toString();
        registry.add("strata.model.path", () -> model);
    }

    /** The fixture's checkpoint and tokenizer (linked, not copied) and a card; no manifest. */
    static Path modelWithCard(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            Path fixture = TestModels.stable().toAbsolutePath();
            for (String f : List.of("config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
                    "model-00002-of-00002.safetensors", "tokenizer.json")) {
                Files.createSymbolicLink(dir.resolve(f), fixture.resolve(f));
            }
            Files.writeString(dir.resolve(TrainingCard.FILE_NAME), CARD);
        }
        return dir;
    }

    @LocalServerPort
    int port;

    @AfterEach
    void noConsoleErrors() {
        if (browser != null) {
            assertThat(browser.consoleErrors()).as("errors in the browser console").isEmpty();
        }
    }

    private Browser browser() {
        if (browser == null) {
            browser = new Browser("http://localhost:" + port);
            browser.driver().manage().window().setSize(new Dimension(1400, 1600));
            browser.logIn("admin", TestPlatform.ADMIN_PASSWORD);
            browser.waitFor(By.id("card-kv"));
        }
        return browser;
    }

    @Test
    void theModelPageSaysWhatTheModelIs() {
        Browser b = browser();
        b.open("/admin/model");
        b.waitFor(By.id("model-about"));
        assertThat(b.find(By.id("about-title")).getText()).isEqualTo("What this model is");
        assertThat(b.find(By.id("about-summary")).getText())
                .isEqualTo("A trained demo (dsv4-card-test), trained on a test text.");
        // as the page shows it (the row labels are set in capitals by the stylesheet)
        assertThat(b.find(By.id("about-card")).getText().lines().toList()).containsExactly(
                "KIND trained demo",
                "PARAMETERS 8.9 M",
                "LAYERS window, c4a, c128a, c4a, c128a, c4a, window",
                "TRAINING DATA a test text",
                "LICENCE CC0-1.0",
                "TOKENS TRAINED 52.4 M",
                "TRAINING 42 min on NVIDIA H200",
                "FINAL TRAINING LOSS 1.875",
                "HELD-OUT PERPLEXITY 7.25 (BF16) · 7.40 (FP8/FP4) on heldout.txt",
                "DATE 2026-12-01");
        assertThat(b.find(By.id("about-perplexity-definition")).getText())
                .isEqualTo("Perplexity: exp of the mean NLL of every token after the first of each chunk");
        assertThat(b.find(By.tagName("main")).getText()).doesNotContain("Test fixture").doesNotContain("No model card");
        // the rest of the page is still there
        assertThat(b.find(By.id("model-config")).isDisplayed()).isTrue();
        b.screenshot("console-11-model-card");

        b.open("/admin/api/console/model");
        JsonNode json = JsonMapper.shared().readTree(b.find(By.tagName("body")).getText());
        assertThat(json.get("id").asString()).isEqualTo("dsv4-card-test");
        JsonNode about = json.get("about");
        assertThat(about.get("source").asString()).isEqualTo("card");
        assertThat(about.get("parameters").asString()).isEqualTo("8.9 M");
        assertThat(about.get("heldoutPerplexity").asString()).isEqualTo("7.25");
        assertThat(about.get("card").get("heldoutPerplexity").asDouble()).isEqualTo(7.251);
        assertThat(about.get("card").get("tokensTrained").asLong()).isEqualTo(52_428_800L);
        assertThat(about.get("card").get("license").asString()).isEqualTo("CC0-1.0");
    }
}
