package io.strata.platform.config;

import io.strata.platform.plugins.PluginJars;
import org.springframework.test.context.DynamicPropertyRegistry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A fresh platform home for a {@code @SpringBootTest}: its own H2 file database and a plugins folder holding
 * the built plugins, with the known admin password. Call {@link #register} from the test's
 * {@code @DynamicPropertySource}.
 */
public record PlatformHome(Path dir) {

    public static PlatformHome temp(String prefix) {
        try {
            return new PlatformHome(Files.createTempDirectory(prefix));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public Path resolve(String other) {
        return dir.resolve(other);
    }

    /** Copies the built plugins in and points the platform's plugins folder, database and admin password here. */
    public void register(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, dir.resolve("plugins"));
        registry.add("strata.db.path", () -> dir.resolve("db/strata").toString());
        registry.add("strata.admin.initial-password", () -> TestPlatform.ADMIN_PASSWORD);
    }
}
