package io.strata.platform.config;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The whole application starts on a fresh database and plugins folder and reports itself healthy. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PlatformStartupTest {
    static final PlatformHome HOME = PlatformHome.temp("strata-startup-");

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        HOME.register(registry);
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
}
