package io.strata.platform.tokenizer;

import java.nio.file.Files;
import java.nio.file.Path;

/** Locates the bundled tiny checkpoints (system property {@code strata.models.dir}, set by surefire). */
public final class TestModels {

    private TestModels() {
    }

    public static Path dir(String name) {
        String root = System.getProperty("strata.models.dir");
        if (root == null) {
            throw new IllegalStateException("system property strata.models.dir is not set (run through Maven)");
        }
        Path dir = Path.of(root, name);
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("missing bundled model " + dir);
        }
        return dir;
    }

    public static Path stable() {
        return dir("dsv4-tiny-stable");
    }
}
