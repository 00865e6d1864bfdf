package io.strata.platform.config;

import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The whole application starts on a fresh database and plugins folder and reports itself healthy. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PlatformStartupTest {
    static final Path HOME = tempHome();

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.copyBuiltPlugins(HOME.resolve("plugins"));
        registry.add("strata.plugins.dir", () -> HOME.resolve("plugins").toString());
        registry.add("strata.db.path", () -> HOME.resolve("db/strata").toString());
        registry.add("strata.admin.initial-password", () -> TestPlatform.ADMIN_PASSWORD);
    }

    @LocalServerPort
    int port;

    WebTestClient http;

    @BeforeEach
    void client() {
        http = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(60)).build();
    }

    @Test
    void healthAndProbesAreUpAndPublic() {
        http.get().uri("/actuator/health").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
        http.get().uri("/actuator/health/liveness").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
        http.get().uri("/actuator/health/readiness").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
    }

    @Test
    void prometheusAndInfoAreExposed() {
        String metrics = http.get().uri("/actuator/prometheus").exchange()
                .expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics).contains("jvm_memory_used_bytes");
        http.get().uri("/actuator/info").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.build.version").isNotEmpty();
    }

    @Test
    void theDatabaseIsTheConfiguredFileMigratedByFlyway() {
        assertThat(Files.exists(HOME.resolve("db/strata.mv.db"))).isTrue();
    }

    private static Path tempHome() {
        try {
            return Files.createTempDirectory("strata-startup-");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
