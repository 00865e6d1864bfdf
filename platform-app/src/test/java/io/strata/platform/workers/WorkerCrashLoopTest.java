package io.strata.platform.workers;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.admin.ServingView;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole server with worker processes and a crash-loop limit of two restarts a minute, the real CPU plugin in
 * a real worker process, real HTTP: the worker is killed (SIGKILL) three times; the first two kills are
 * restarted, the third is not — the worker stays failed with no process, {@code /health} turns 503 saying why
 * without a request having to fail first, completions are 503 in the API's error shape naming the worker and
 * the crash loop, and the console shows the failed worker.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:worker-crash-loop;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=worker-crash-loop-test-password",
        "strata.backend=cpu",
        "strata.engine.worker-process=true",
        "strata.engine.worker-max-restarts=2",
        "strata.engine.worker-restart-window=60s"})
@ExtendWith(OutputCaptureExtension.class)
class WorkerCrashLoopTest {

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target", "worker-crash-loop-plugins"));
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ServingBackend serving;
    @Autowired
    InferenceEngine engine;
    @Autowired
    MeterRegistry registry;
    @Autowired
    ObjectMapper json;

    @Test
    void aWorkerKilledMoreOftenThanTheWindowAllowsIsNotRestartedAndTheBackendSaysWhy(CapturedOutput output)
            throws InterruptedException {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(120)).build();
        String key = keys.create("worker-crash-loop", null).secret();
        assertThat(complete(client, key).getStatus().value()).isEqualTo(200);

        WorkerState s = serving.worker("worker-0").orElseThrow();
        assertThat(s.state()).isEqualTo("running");
        for (int restart = 1; restart <= 2; restart++) {
            long pid = s.pid();
            kill(pid);
            s = WorkerStates.awaitRunning(serving, "worker-0", pid);
            assertThat(s.restarts()).isEqualTo(restart);
        }
        assertThat(complete(client, key).getStatus().value()).as("the restarted worker serves").isEqualTo(200);

        long last = s.pid();
        // other test classes' servers may still hold workers of their own in this JVM: compare, don't expect none
        Set<Long> others = children();
        others.remove(last);
        int logStart = output.getAll().length();
        kill(last);
        WorkerState failed = WorkerStates.await(serving, "worker-0", w -> w.state().equals("failed"),
                "left failed after the third kill");
        assertThat(failed.pid()).isZero();
        Thread.sleep(2000); // a restart would have started a new worker by now
        WorkerState still = serving.worker("worker-0").orElseThrow();
        assertThat(still.state()).as(still.summary()).isEqualTo("failed");
        assertThat(still.pid()).isZero();
        assertThat(still.restarts()).isEqualTo(2);
        assertThat(children()).as("no new worker process was started").isEqualTo(others);
        assertThat(registry.get("strata.worker_restarts").counter().count()).isEqualTo(2.0);

        // no request has been sent since: the engine noticed by itself, /health is 503 saying why
        String health = client.get().uri("/health").exchange().expectStatus().isEqualTo(503)
                .expectBody(String.class).returnResult().getResponseBody();
        JsonNode healthError = json.readTree(health).get("error");
        assertThat(healthError).as(health).isNotNull();
        assertCrashLoop(healthError.get("message").stringValue());
        assertThat(engine.status().up()).isFalse();
        assertCrashLoop(engine.status().detail());

        // what a client sees: a 503 in the API's error shape with the same reason
        for (int i = 0; i < 2; i++) {
            EntityExchangeResult<byte[]> refused = complete(client, key);
            JsonNode error = json.readTree(refused.getResponseBody()).get("error");
            assertThat(error).as(new String(refused.getResponseBody())).isNotNull();
            assertThat(refused.getStatus().value()).isEqualTo(503);
            assertThat(error.get("code").intValue()).isEqualTo(503);
            assertCrashLoop(error.get("message").stringValue());
        }

        // for the operator: one ERROR line saying why, no stack trace; the engine's consequence is a WARN line
        List<String> log = output.getAll().substring(logStart).lines().toList();
        assertThat(log).filteredOn(l -> l.contains("\tat ") || l.contains("Exception")).isEmpty();
        assertThat(log).filteredOn(l -> l.contains(" ERROR ")).singleElement().asString()
                .contains("WorkerSupervisor").contains("crash loop");
        assertThat(log).filteredOn(l -> l.contains(" WARN ")).singleElement().asString()
                .contains("Backend marked unusable").contains("crash loop");

        List<String> console = ServingView.of(serving, engine.status()).workers();
        assertThat(console).hasSize(1);
        assertThat(console.getFirst()).contains("worker-0").contains("failed").contains("restarted 2 time(s)")
                .contains("pid " + last);
    }

    private static void assertCrashLoop(String message) {
        assertThat(message).contains("worker-0 is down").contains("crash loop").contains("crashed 3 times within 60 s")
                .contains("2 restarts").contains("strata.engine.worker-max-restarts")
                .contains("exited with code").doesNotContain("\tat ").doesNotContain("Exception");
    }

    private EntityExchangeResult<byte[]> complete(WebTestClient client, String key) {
        return client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", "def f(x):\n    return", "max_tokens", 8, "temperature", 0))
                .exchange().expectBody().returnResult();
    }

    private static Set<Long> children() {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
                .collect(Collectors.toCollection(HashSet::new));
    }

    private static void kill(long pid) {
        ProcessHandle p = ProcessHandle.of(pid).orElseThrow();
        assertThat(p.destroyForcibly()).isTrue();
        p.onExit().join();
    }
}
