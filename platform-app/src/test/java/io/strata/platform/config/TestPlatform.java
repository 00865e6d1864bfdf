package io.strata.platform.config;

import io.strata.platform.StrataApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A whole Strata process for tests that need to stop and start it (restart behaviour): its own
 * H2 file database and plugins folder under one temp directory, a random port.
 */
public final class TestPlatform implements AutoCloseable {
    public static final String ADMIN_PASSWORD = "test-admin-password-7f3c";

    private final Path home;
    private boolean initialPassword = true;
    private ConfigurableApplicationContext context;

    private TestPlatform(Path home) {
        this.home = home;
    }

    /** Starts without {@code strata.admin.initial-password}, so the platform must generate one. */
    public TestPlatform withoutInitialPassword() {
        initialPassword = false;
        return this;
    }

    public static TestPlatform in(Path home) throws IOException {
        Files.createDirectories(home.resolve("plugins"));
        return new TestPlatform(home);
    }

    public Path pluginsDir() {
        return home.resolve("plugins");
    }

    public Path databasePath() {
        return home.resolve("db").resolve("strata");
    }

    public static List<String> properties(Path pluginsDir, Path databasePath) {
        return List.of(
                "server.port=0",
                "strata.plugins.dir=" + pluginsDir,
                "strata.db.path=" + databasePath,
                "strata.admin.initial-password=" + ADMIN_PASSWORD,
                "strata.shutdown.drain-timeout=2s");
    }

    public TestPlatform start(String... extraProperties) {
        return start(context -> { }, extraProperties);
    }

    /** Starts with extra beans registered by {@code initializer} (kept out of component scanning). */
    public TestPlatform start(ApplicationContextInitializer<ConfigurableApplicationContext> initializer, String... extraProperties) {
        if (context != null) {
            throw new IllegalStateException("already running");
        }
        List<String> props = new ArrayList<>(properties(pluginsDir(), databasePath()));
        if (!initialPassword) {
            props.removeIf(p -> p.startsWith("strata.admin.initial-password="));
        }
        props.addAll(List.of(extraProperties));
        // as command-line arguments: builder "properties" are defaults that application.yml would override
        context = new SpringApplicationBuilder(StrataApplication.class)
                .initializers(initializer)
                .run(props.stream().map(p -> "--" + p).toArray(String[]::new));
        return this;
    }

    public TestPlatform restart() {
        stop();
        return start();
    }

    public void stop() {
        if (context != null) {
            context.close();
            context = null;
        }
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    public int port() {
        return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
    }

    public String baseUrl() {
        return "http://localhost:" + port();
    }

    @Override
    public void close() {
        stop();
    }
}
