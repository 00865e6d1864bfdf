package io.strata.platform.console;

import io.strata.platform.engine.TrainingCard;
import io.strata.platform.tokenizer.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** "What this model is": a card read leniently, the fixtures recognised, and plain words otherwise. */
class ModelAboutTest {

    @Test
    void aCardIsReadLenientlyAndFormattedForAPerson(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve(TrainingCard.FILE_NAME), """
                {"name": "dsv4-demo", "description": "trained demo: a small model", "parameters": 8912896,
                 "layers": ["window", "c4a", 128],
                 "data": {"source": "TinyStories", "licence": "CDLA-Sharing-1.0", "train_files": 3},
                 "tokens_trained": 123456789, "train_minutes": 65.4, "device": "NVIDIA H200",
                 "final_train_loss": 1.5,
                 "heldout": {"text_file": "heldout.txt", "bf16": {"perplexity": 7.251}, "fp8": {"perplexity": 7.4}},
                 "something_new": {"ignored": true}, "date": "2026-12-01"}""");
        ModelAbout about = ModelAbout.of(dir);
        assertThat(about.source()).isEqualTo("card");
        assertThat(about.summary()).isEqualTo("A trained demo (dsv4-demo), trained on TinyStories.");
        assertThat(about.parameters()).isEqualTo("8.9 M");
        assertThat(about.tokensTrained()).isEqualTo("123 M");
        assertThat(about.training()).isEqualTo("1 h 5 min on NVIDIA H200");
        assertThat(about.heldoutPerplexity()).isEqualTo("7.25");
        assertThat(about.heldoutPerplexityQuantized()).isEqualTo("7.40");
        assertThat(about.card().layers()).containsExactly("window", "c4a", "128");
        assertThat(about.card().heldoutPath(dir)).contains(dir.resolve("heldout.txt"));
        assertThat(about.card().perplexityDefinition()).isNull();
    }

    @Test
    void missingAndMistypedFieldsAreAbsent(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve(TrainingCard.FILE_NAME), "{\"parameters\": \"many\", \"train_minutes\": 0.5}");
        ModelAbout about = ModelAbout.of(dir);
        assertThat(about.summary()).isEqualTo("A model.");
        assertThat(about.parameters()).isNull();
        assertThat(about.training()).isEqualTo("30 s");
        assertThat(about.card().layers()).isEmpty();
    }

    @Test
    void aBrokenCardIsSaidToBeBroken(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve(TrainingCard.FILE_NAME), "[1, 2]");
        assertThat(ModelAbout.of(dir).source()).isEqualTo("error");
        assertThat(ModelAbout.of(dir).summary()).startsWith("The model card could not be read:");
    }

    @Test
    void theFixturesAreRandomAndAnUnknownFolderHasNoCard(@TempDir Path dir) {
        assertThat(ModelAbout.of(TestModels.stable())).extracting(ModelAbout::source, ModelAbout::summary)
                .containsExactly("fixture", ModelAbout.FIXTURE);
        assertThat(ModelAbout.of(TestModels.dir("dsv4-tiny-fp8")).source()).isEqualTo("fixture");
        assertThat(ModelAbout.of(dir)).extracting(ModelAbout::source, ModelAbout::summary)
                .containsExactly("none", ModelAbout.NO_CARD);
    }

    @Test
    void countsReadLikeAPersonWouldSayThem() {
        assertThat(ModelAbout.count(950L)).isEqualTo("950");
        assertThat(ModelAbout.count(45_000L)).isEqualTo("45.0 K");
        assertThat(ModelAbout.count(250_000_000L)).isEqualTo("250 M");
        assertThat(ModelAbout.count(1_200_000_000L)).isEqualTo("1.2 B");
    }
}
