package io.strata.platform.engine;

import io.strata.model.catalogue.CheckpointValidationException;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.checkpoint.SafetensorsWriter;
import io.strata.model.checkpoint.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine opens the served checkpoint through the model loader: a broken checkpoint names what is wrong. */
class CheckpointLoadTest {
    private static final String SHARD = "model-00001-of-00002.safetensors";
    private static final String VICTIM = "layers.1.attn.compressor.ape";

    @TempDir
    Path tmp;

    @Test
    void theBundledCheckpointLoads() {
        Path dir = Path.of(System.getProperty("strata.models.dir"), "dsv4-tiny-stable");
        EngineConfiguration.ServedModel model = EngineConfiguration.load(dir, new ModelProperties(dir.toString(), 512, null));
        try {
            assertThat(model.card().maxModelLen()).isEqualTo(512);
            assertThat(model.weights().validation().problems()).isEmpty();
            assertThat(model.checkpoint().tensor(VICTIM)).isNotNull();
        } finally {
            model.weights().close();
        }
    }

    @Test
    void aMissingTensorStopsTheLoadWithTheLoadersReport() throws IOException {
        Path dir = brokenCopy();
        assertThatThrownBy(() -> EngineConfiguration.load(dir, new ModelProperties(dir.toString(), null, null)))
                .isInstanceOf(ModelLoadException.class)
                .hasMessageContaining("Cannot load model " + dir)
                .hasMessageContaining("missing " + VICTIM)
                .hasCauseInstanceOf(CheckpointValidationException.class);
    }

    @Test
    void aMissingTensorFailsStartUpUnlessConsoleOnly() throws Exception {
        Path dir = brokenCopy();
        EngineConfiguration configuration = new EngineConfiguration();
        assertThatThrownBy(() -> configuration.inferenceEngine(new ModelProperties(dir.toString(), null, "fail"),
                null, null, null, null, null, null, new ServingBackend(), null, "", null))
                .isInstanceOf(ModelLoadException.class)
                .hasMessageContaining("missing " + VICTIM);

        // console-only returns before any backend is consulted, so no plugin host is needed here
        try (InferenceEngine engine = configuration.inferenceEngine(
                new ModelProperties(dir.toString(), null, "console-only"), null, null, null, null, null, null,
                new ServingBackend(), null, "", null)) {
            assertThat(engine).isInstanceOf(OfflineEngine.class);
            assertThat(engine.status().up()).isFalse();
            assertThat(engine.status().detail()).contains("missing " + VICTIM);
        }
    }

    /** A copy of the stable checkpoint with one tensor taken out of its shard and of the index. */
    private Path brokenCopy() throws IOException {
        Path source = Path.of(System.getProperty("strata.models.dir"), "dsv4-tiny-stable");
        Path dir = tmp.resolve("dsv4-tiny-broken");
        Files.createDirectories(dir);
        try (Stream<Path> files = Files.list(source)) {
            files.forEach(f -> {
                try {
                    Files.copy(f, dir.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        SafetensorsWriter writer = new SafetensorsWriter();
        try (SafetensorsFile shard = SafetensorsFile.open(dir.resolve(SHARD))) {
            for (Tensor t : shard.tensors().values()) {
                if (!t.name().equals(VICTIM)) {
                    writer.add(t);
                }
            }
            writer.write(dir.resolve(SHARD + ".tmp"));
        }
        Files.move(dir.resolve(SHARD + ".tmp"), dir.resolve(SHARD), StandardCopyOption.REPLACE_EXISTING);
        Path index = dir.resolve("model.safetensors.index.json");
        String json = Files.readString(index);
        String edited = json.replaceAll("\\n\\s*\"" + Pattern.quote(VICTIM) + "\": \"[^\"]+\",?", "");
        assertThat(edited).isNotEqualTo(json);
        Files.writeString(index, edited);
        return dir;
    }
}
