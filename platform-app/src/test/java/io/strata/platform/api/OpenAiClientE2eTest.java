package io.strata.platform.api;

import io.strata.platform.keys.ApiKeyService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives the running server with the official {@code openai} npm package (pinned in
 * src/test/node/package-lock.json, installed with {@code npm ci} on first use) under the machine's Node.js.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:e2e;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=e2e-test-password",
        "strata.plugins.dir=target/no-plugins"})
@Import(ServingTestConfiguration.class)
class OpenAiClientE2eTest {
    private static final Path NODE_DIR = Path.of("src/test/node");

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;

    @Test
    void officialOpenAiClientWorksAgainstTheServer() throws Exception {
        installClient();
        String key = keys.create("e2e", null).secret();
        ProcessBuilder pb = new ProcessBuilder("node", "e2e.mjs").directory(NODE_DIR.toFile()).redirectErrorStream(true);
        pb.environment().put("STRATA_BASE_URL", "http://localhost:" + port + "/v1");
        pb.environment().put("STRATA_API_KEY", key);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        System.out.println(out);
        assertThat(out).contains("7 passed, 0 failed");
        assertThat(p.exitValue()).isZero();
    }

    /** {@code npm ci} from the lock file, once; needs the npm registry on first run (CI installs it in .ci/run too). */
    static void installClient() throws IOException, InterruptedException {
        if (Files.isDirectory(NODE_DIR.resolve("node_modules/openai"))) {
            return;
        }
        Process p = new ProcessBuilder(List.of("npm", "ci", "--no-audit", "--no-fund"))
                .directory(NODE_DIR.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("npm ci failed:\n" + out).isZero();
    }
}
