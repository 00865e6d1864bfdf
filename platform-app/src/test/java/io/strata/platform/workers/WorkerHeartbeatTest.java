package io.strata.platform.workers;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Heartbeats, on the whole server with a real worker process and real HTTP: a worker that is alive but frozen
 * (SIGSTOP) is noticed within {@code strata.engine.worker-heartbeat-timeout} — with a request in flight, which
 * then fails in the API's error shape instead of hanging, and while idle, before any request comes — killed,
 * counted and restarted, and the server serves the same greedy text afterwards. A step that takes longer than
 * the heartbeat timeout is not mistaken for a hang: the beats come from a thread of their own.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:worker-heartbeat;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=worker-heartbeat-test-password",
        "strata.backend=cpu",
        "strata.engine.worker-process=true",
        "strata.engine.worker-heartbeat-timeout=2s",
        "strata.scheduler.max-num-batched-tokens=8192"})
@ExtendWith(OutputCaptureExtension.class)
@DirtiesContext
class WorkerHeartbeatTest {
    static final Duration TIMEOUT = Duration.ofSeconds(2);
    /**
     * The earliest a frozen worker can be noticed: its silence counts from its last beat, which came up to one
     * beat interval (a quarter of the timeout) before it was stopped.
     */
    static final Duration EARLIEST = TIMEOUT.minus(TIMEOUT.dividedBy(4));
    /** Beyond the timeout: one heartbeat interval until the check notices, the kill, the exit, the crash report. */
    static final Duration MARGIN = Duration.ofSeconds(6);
    static final String PROMPT = "def g(y):\n" + "    y = y * 2\n".repeat(60) + "    return";

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target", "worker-heartbeat-plugins"));
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    ServingBackend serving;
    @Autowired
    MeterRegistry registry;
    @Autowired
    ObjectMapper json;

    WebTestClient client;
    String key;

    @BeforeEach
    void setUp() {
        client = WebTestClient.bindToServer().baseUrl("http://localhost:" + port).responseTimeout(Duration.ofSeconds(120)).build();
        key = keys.create("worker-heartbeat", null).secret();
    }

    @Test
    void aStoppedWorkerFailsTheRequestInFlightWithinTheTimeoutAndIsReplaced(CapturedOutput output) throws Exception {
        WorkerState before = WorkerStates.awaitRunning(serving, "worker-0", 0);
        double restarts = restarts();
        String text = text(complete(PROMPT, 16));

        int logStart = output.getAll().length();
        stop(before.pid());
        long sent = System.nanoTime();
        byte[] body;
        Duration took;
        try {
            body = client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("prompt", PROMPT, "max_tokens", 16, "temperature", 0))
                    .exchange().expectStatus().isEqualTo(500).expectBody().returnResult().getResponseBody();
            took = Duration.ofNanos(System.nanoTime() - sent);
            assertThat(ProcessHandle.of(before.pid()).filter(ProcessHandle::isAlive)).as("the stopped worker was killed")
                    .isEmpty();
        } finally {
            // never leave a stopped process behind, whatever failed above
            ProcessHandle.of(before.pid()).ifPresent(ProcessHandle::destroyForcibly);
        }
        assertThat(took).as("the request failed within the heartbeat timeout and a margin").isLessThan(TIMEOUT.plus(MARGIN));
        assertThat(took).as("not before the heartbeat timeout, less the last beat interval").isGreaterThanOrEqualTo(EARLIEST);

        JsonNode error = json.readTree(body).get("error");
        assertThat(error).as(new String(body)).isNotNull();
        assertThat(error.get("type").stringValue()).isEqualTo("InternalServerError");
        assertThat(error.get("code").intValue()).isEqualTo(500);
        assertThat(error.get("message").stringValue())
                .contains("worker-0").contains("pid " + before.pid()).contains("hung")
                .contains("no heartbeat for").contains("strata.engine.worker-heartbeat-timeout")
                .doesNotContain("\tat ").doesNotContain("Exception");

        WorkerState after = WorkerStates.awaitRunning(serving, "worker-0", before.pid());
        assertThat(after.restarts()).isEqualTo(before.restarts() + 1);
        assertThat(after.lastCrash()).contains("no heartbeat for");
        assertThat(restarts()).isEqualTo(restarts + 1);
        client.get().uri("/health").exchange().expectStatus().isOk();

        JsonNode fresh = complete(PROMPT, 16);
        assertThat(text(fresh)).as("the restarted worker gives the same greedy text").isEqualTo(text);
        assertThat(fresh.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue())
                .as("nothing computed by the stopped worker is reused").isZero();

        // for the operator: one WARN line, no ERROR and no stack trace for this user-visible event
        List<String> log = output.getAll().substring(logStart).lines().toList();
        assertThat(log).filteredOn(l -> l.contains(" ERROR ") || l.contains("at io.strata.")).isEmpty();
        assertThat(log).filteredOn(l -> l.contains(" WARN ") && l.contains("i.s.")).singleElement()
                .asString().contains("worker-0").contains("hung").contains("restarting it");
    }

    @Test
    void aStoppedIdleWorkerIsReplacedBeforeAnyRequestComes() throws Exception {
        WorkerState before = WorkerStates.awaitRunning(serving, "worker-0", 0);
        double restarts = restarts();
        String text = text(complete(PROMPT, 8));

        stop(before.pid());
        long stopped = System.nanoTime();
        try {
            ProcessHandle old = ProcessHandle.of(before.pid()).orElseThrow();
            old.onExit().get(TIMEOUT.plus(MARGIN).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } finally {
            ProcessHandle.of(before.pid()).ifPresent(ProcessHandle::destroyForcibly);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - stopped);
        assertThat(took).as("killed after the heartbeat timeout, less the last beat interval").isGreaterThanOrEqualTo(EARLIEST);

        WorkerState after = WorkerStates.awaitRunning(serving, "worker-0", before.pid());
        assertThat(after.lastCrash()).contains("hung").contains("no heartbeat for");
        assertThat(restarts()).isEqualTo(restarts + 1);
        assertThat(text(complete(PROMPT, 8))).isEqualTo(text);
    }

    @Test
    void aStepLongerThanTheTimeoutIsNotMistakenForAHang() {
        WorkerState before = WorkerStates.awaitRunning(serving, "worker-0", 0);
        double restarts = restarts();
        // one prefill step of 2500 tokens (the step budget is 8192): several seconds of work on two cores
        int[] prompt = IntStream.range(0, 2500).map(i -> 20 + (i * 37 + i / 7) % 1000).toArray();
        long sent = System.nanoTime();
        JsonNode r = complete(prompt, 1);
        Duration took = Duration.ofNanos(System.nanoTime() - sent);
        assertThat(took).as("the premise: the prefill step outlasts the heartbeat timeout").isGreaterThan(TIMEOUT);
        assertThat(r.get("usage").get("prompt_tokens").intValue()).isEqualTo(2500);
        WorkerState after = serving.worker("worker-0").orElseThrow();
        assertThat(after.pid()).as("the busy worker was not killed").isEqualTo(before.pid());
        assertThat(after.restarts()).isEqualTo(before.restarts());
        assertThat(restarts()).isEqualTo(restarts);
    }

    private JsonNode complete(Object prompt, int maxTokens) {
        byte[] body = client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("prompt", prompt, "max_tokens", maxTokens, "temperature", 0))
                .exchange().expectStatus().isOk().expectBody().returnResult().getResponseBody();
        return json.readTree(body);
    }

    private static String text(JsonNode completion) {
        return completion.get("choices").get(0).get("text").stringValue();
    }

    private double restarts() {
        return registry.get("strata.worker_restarts").tag("worker", "worker-0").counter().count();
    }

    /** Freezes the process: alive, holding its sockets open, answering nothing. */
    private static void stop(long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -STOP " + pid).isZero();
    }
}
