package io.strata.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.strata.model.catalogue.ValidationReport;
import io.strata.model.catalogue.WeightCatalogue;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.CheckpointException;
import io.strata.model.config.ModelConfig;

/**
 * Opens a Hugging Face-format DeepSeek-V4 directory ({@code config.json} plus safetensors, sharded or not):
 * parses and validates the config, maps every shard, and checks the tensors against the config's catalogue
 * (headers only — no weight bytes are read, so loading costs the same for 1 MB or 150 GB).
 *
 * <p>Failures: {@link io.strata.model.config.InvalidConfigException} (config rules),
 * {@link CheckpointException} (unreadable or malformed files),
 * {@link io.strata.model.catalogue.CheckpointValidationException} (missing / unexpected / mismatched tensors,
 * all listed).
 */
public final class ModelLoader {

    public static final String CONFIG_FILE = "config.json";

    private ModelLoader() {
    }

    public static LoadedModel load(Path directory) {
        Path configFile = directory.resolve(CONFIG_FILE);
        if (!Files.isRegularFile(configFile)) {
            throw new CheckpointException(configFile.toString(), null, "missing: a model directory needs config.json");
        }
        ModelConfig config;
        try {
            config = ModelConfig.parse(configFile);
        } catch (IOException e) {
            throw new CheckpointException(configFile.toString(), null, "cannot read: " + e.getMessage(), e);
        }
        WeightCatalogue catalogue = WeightCatalogue.of(config);
        Checkpoint checkpoint = Checkpoint.open(directory);
        try {
            ValidationReport report = ValidationReport.check(catalogue, checkpoint).requireClean();
            return new LoadedModel(directory, config, catalogue, checkpoint, report);
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
    }
}
