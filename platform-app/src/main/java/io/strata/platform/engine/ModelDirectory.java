package io.strata.platform.engine;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resolves {@code strata.model.path}: absolute paths as given; relative ones against the working
 * directory, and, when not found there, against {@code strata.models.dir} (so {@code models/x} and
 * {@code x} both work from any working directory, as tests and the run script need).
 */
final class ModelDirectory {
    private ModelDirectory() {
    }

    static Path resolve(String configured, String modelsDir) {
        Path p = Path.of(configured);
        if (p.isAbsolute() || Files.isDirectory(p) || modelsDir == null || modelsDir.isBlank()) {
            return p.toAbsolutePath().normalize();
        }
        Path base = Path.of(modelsDir);
        Path candidate = base.resolve(p);
        if (!Files.isDirectory(candidate) && p.getNameCount() > 1 && p.getName(0).toString().equals("models")) {
            candidate = base.resolve(p.subpath(1, p.getNameCount()));
        }
        return (Files.isDirectory(candidate) ? candidate : p).toAbsolutePath().normalize();
    }
}
