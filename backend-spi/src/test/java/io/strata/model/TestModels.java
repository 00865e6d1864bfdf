package io.strata.model;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the bundled tiny checkpoints live (system property {@code strata.models.dir}, set by surefire). */
public final class TestModels {

    private TestModels() {
    }

    public static Path dir() {
        String dir = System.getProperty("strata.models.dir");
        if (dir == null) {
            throw new IllegalStateException("system property strata.models.dir is not set (surefire sets it)");
        }
        return Path.of(dir);
    }

    public static Path stable() {
        return existing(dir().resolve("dsv4-tiny-stable"));
    }

    public static Path fp8() {
        return existing(dir().resolve("dsv4-tiny-fp8"));
    }

    private static Path existing(Path p) {
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("fixture folder missing: " + p);
        }
        return p;
    }
}
