package io.strata.platform.planner;

import io.strata.kv.KvModelShape;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ReferenceModel;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Resolves a model name for the planner: a bundled reference config, the blog's what-if stack, or a file. */
public final class ModelChoice {

    /** Names accepted everywhere (the HTTP endpoint accepts only these, never paths). */
    public static final String NAMES = "flash, pro, v4-30c4a-31c128a";

    private ModelChoice() {
    }

    /**
     * A model to plan for.
     *
     * @param shape       what the KV layout needs
     * @param trunkLayers layers without the MTP blocks (vLLM's accounting leaves MTP out)
     */
    public record Planned(KvModelShape shape, int trunkLayers) {
        static Planned of(String id, ModelConfig c) {
            return new Planned(KvModelShape.of(id, c), c.numHiddenLayers());
        }
    }

    public static Planned named(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "flash", "v4-flash", "deepseek-v4-flash" -> Planned.of("deepseek-v4-flash", ReferenceModel.V4_FLASH.config());
            case "pro", "v4-pro", "deepseek-v4-pro" -> Planned.of("deepseek-v4-pro", ReferenceModel.V4_PRO.config());
            case "v4-30c4a-31c128a", "blog" -> new Planned(KvModelShape.synthetic("v4-30c4a-31c128a", 30, 31), 61);
            default -> throw new IllegalArgumentException("unknown model '" + name + "' (expected one of " + NAMES
                    + ", or for the command line a path to a config.json)");
        };
    }

    /** A name, or a path to a V4 {@code config.json} or to a folder holding one (command line only). */
    public static Planned namedOrFile(String nameOrPath) {
        Path p = Path.of(nameOrPath);
        if (Files.isDirectory(p)) {
            p = p.resolve("config.json");
        }
        if (!Files.isRegularFile(p)) {
            return named(nameOrPath);
        }
        try {
            Path dir = p.toAbsolutePath().getParent();
            return Planned.of(dir.getFileName().toString(), ModelConfig.parse(p));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + p, e);
        }
    }
}
