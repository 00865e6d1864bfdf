package io.strata.platform.workers;

import io.strata.platform.StrataApplication;
import io.strata.platform.admin.ServingView;
import io.strata.platform.api.GreedyCompletions;
import io.strata.platform.engine.DataParallelEngine;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.RankLoad;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.plugins.PluginJars;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker process per data-parallel rank ({@code strata.engine.data-parallel-size=2} with
 * {@code strata.engine.worker-process=true}), the real CPU plugin in two real worker processes, real HTTP: two
 * distinct child processes serve; requests are served by both ranks with the greedy texts of an in-process
 * one-rank server; killing one rank's worker fails only that rank's request in flight, restarts that worker
 * alone, and the other rank's stream runs to its end.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.datasource.url=jdbc:h2:mem:worker-per-rank;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=worker-per-rank-test-password",
        "strata.backend=cpu",
        "strata.engine.worker-process=true",
        "strata.engine.data-parallel-size=2",
        "strata.model.max-model-len=2048",
        "strata.scheduler.max-num-seqs=8"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DirtiesContext
class WorkerPerRankTest {
    static final List<int[]> PROMPTS = IntStream.range(0, 4).mapToObj(i -> prompt(200 + 30 * i, 40 + i)).toList();

    @DynamicPropertySource
    static void plugins(DynamicPropertyRegistry registry) throws IOException {
        PluginJars.serveBuiltPlugins(registry, Path.of("target", "worker-per-rank-plugins"));
    }

    @LocalServerPort
    int port;
    @Autowired
    ApiKeyService keys;
    @Autowired
    InferenceEngine engine;
    @Autowired
    ServingBackend serving;
    @Autowired
    ObjectMapper json;

    /** The greedy texts of {@link #PROMPTS} from a one-rank server with the backend in its own process. */
    List<String> oneRankTexts;

    @BeforeAll
    void oneRankInProcess() throws IOException {
        Path plugins = Path.of("target", "worker-per-rank-one-rank-plugins");
        PluginJars.copyBuiltPlugins(plugins);
        // command-line arguments: they rank above application.yml, as the test's own properties do
        try (ConfigurableApplicationContext one = new SpringApplicationBuilder(StrataApplication.class).run(
                "--server.port=0",
                "--spring.datasource.url=jdbc:h2:mem:worker-per-rank-one-rank;DB_CLOSE_DELAY=-1",
                "--strata.admin.initial-password=worker-per-rank-one-rank-password",
                "--strata.backend=cpu",
                "--strata.model.max-model-len=2048",
                "--strata.scheduler.max-num-seqs=8",
                "--strata.plugins.dir=" + plugins)) {
            assertThat(one.getBean(InferenceEngine.class)).isNotInstanceOf(DataParallelEngine.class);
            assertThat(one.getBean(ServingBackend.class).workers()).as("in-process: no worker").isEmpty();
            int onePort = ((WebServerApplicationContext) one).getWebServer().getPort();
            oneRankTexts = GreedyCompletions.concurrently(onePort,
                    one.getBean(ApiKeyService.class).create("one-rank", null).secret(), PROMPTS, json);
        }
    }

    @Test
    void eachRankHasAWorkerProcessOfItsOwn() {
        assertThat(engine).isInstanceOf(DataParallelEngine.class);
        assertThat(serving.workers()).extracting(WorkerState::worker).containsExactly("worker-0", "worker-1");
        WorkerState w0 = serving.worker("worker-0").orElseThrow();
        WorkerState w1 = serving.worker("worker-1").orElseThrow();
        assertThat(List.of(w0.state(), w1.state())).containsOnly("running");
        assertThat(w0.pid()).isPositive().isNotEqualTo(w1.pid());
        assertThat(w1.pid()).isPositive();
        Set<Long> children = ProcessHandle.current().children().filter(ProcessHandle::isAlive)
                .map(ProcessHandle::pid).collect(Collectors.toSet());
        assertThat(children).as("both workers are live child processes of the platform").contains(w0.pid(), w1.pid());
        assertThat(ServingView.of(serving, engine.status()).workers()).hasSize(2)
                .anySatisfy(l -> assertThat(l).startsWith("worker-0 (pid " + w0.pid() + "): running"))
                .anySatisfy(l -> assertThat(l).startsWith("worker-1 (pid " + w1.pid() + "): running"));
    }

    @Test
    void bothRanksServeAndTheTextsAreThoseOfOneRankInProcess() {
        String key = keys.create("worker-per-rank", null).secret();
        double[] before = {metric("strata_generation_tokens_total", 0), metric("strata_generation_tokens_total", 1)};
        List<String> texts = GreedyCompletions.concurrently(port, key, PROMPTS, json);
        for (int r = 0; r < 2; r++) {
            assertThat(metric("strata_generation_tokens_total", r)).as("rank " + r + " generated some of the tokens")
                    .isGreaterThan(before[r]);
        }
        assertThat(texts).isEqualTo(oneRankTexts);
    }

    @Test
    void killingOneRanksWorkerFailsOnlyThatRanksRequestAndTheOtherRankServesOn() throws Exception {
        String key = keys.create("worker-per-rank-kill", null).secret();
        WorkerState w0 = serving.worker("worker-0").orElseThrow();
        WorkerState w1 = serving.worker("worker-1").orElseThrow();
        double failed0 = metric("strata_engine_step_failures_total", 0);
        double failed1 = metric("strata_engine_step_failures_total", 1);
        double restarts0 = metric("strata_worker_restarts_total", "worker=\"worker-0\"");
        double restarts1 = metric("strata_worker_restarts_total", "worker=\"worker-1\"");

        // two long streams sent together: the router puts the second on the other rank (least loaded)
        List<Stream> streams = List.of(new Stream(prompt(120, 7)), new Stream(prompt(140, 8)));
        streams.forEach(s -> s.start(key));
        for (Stream s : streams) {
            assertThat(s.firstText.await(120, TimeUnit.SECONDS)).as("both streams produce text").isTrue();
        }
        List<RankLoad> loads = engine.rankLoads();
        assertThat(loads).as("one stream runs on each rank: " + loads).allSatisfy(l -> assertThat(l.running()).isEqualTo(1));
        ProcessHandle.of(w1.pid()).orElseThrow().destroyForcibly();
        for (Stream s : streams) {
            assertThat(s.done.await(180, TimeUnit.SECONDS)).as("both streams end").isTrue();
        }

        List<Stream> errored = streams.stream().filter(s -> s.error() != null).toList();
        assertThat(errored).as("exactly one stream failed").hasSize(1);
        JsonNode error = errored.getFirst().error();
        assertThat(error.get("code").intValue()).isEqualTo(500);
        assertThat(error.get("message").stringValue()).contains("worker-1").contains("pid " + w1.pid())
                .contains("crashed").doesNotContain("worker-0");
        Stream survivor = streams.stream().filter(s -> s.error() == null).findFirst().orElseThrow();
        assertThat(survivor.events.getLast().trim()).isEqualTo("[DONE]");
        assertThat(survivor.finishReason()).as("rank 0's stream ran to its length").isEqualTo("length");

        WorkerState after1 = WorkerStates.awaitRunning(serving, "worker-1", w1.pid());
        assertThat(after1.restarts()).isEqualTo(w1.restarts() + 1);
        WorkerState after0 = serving.worker("worker-0").orElseThrow();
        assertThat(after0.pid()).as("rank 0's worker was left alone").isEqualTo(w0.pid());
        assertThat(after0.restarts()).isEqualTo(w0.restarts());
        assertThat(metric("strata_worker_restarts_total", "worker=\"worker-1\"")).isEqualTo(restarts1 + 1);
        assertThat(metric("strata_worker_restarts_total", "worker=\"worker-0\"")).isEqualTo(restarts0);
        assertThat(metric("strata_engine_step_failures_total", 1)).isEqualTo(failed1 + 1);
        assertThat(metric("strata_engine_step_failures_total", 0)).isEqualTo(failed0);
        WebClient.create("http://localhost:" + port).get().uri("/health").retrieve().toBodilessEntity()
                .block(Duration.ofSeconds(30));

        double[] before = {metric("strata_generation_tokens_total", 0), metric("strata_generation_tokens_total", 1)};
        assertThat(GreedyCompletions.concurrently(port, key, PROMPTS, json))
                .as("both ranks, one with a new worker, give the same texts")
                .isEqualTo(oneRankTexts);
        for (int r = 0; r < 2; r++) {
            assertThat(metric("strata_generation_tokens_total", r)).as("rank " + r + " serves after the restart")
                    .isGreaterThan(before[r]);
        }
    }

    /** A streamed greedy completion of 300 tokens, its events collected as they come. */
    private final class Stream {
        final int[] prompt;
        final List<String> events = new CopyOnWriteArrayList<>();
        final CountDownLatch firstText = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);

        Stream(int[] prompt) {
            this.prompt = prompt;
        }

        void start(String key) {
            WebClient.create("http://localhost:" + port).post().uri("/v1/completions")
                    .header("Authorization", "Bearer " + key).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("prompt", prompt, "max_tokens", 300, "stream", true, "temperature", 0.0, "ignore_eos", true))
                    .retrieve().bodyToFlux(String.class)
                    .filter(d -> !d.isBlank())
                    .doOnNext(d -> {
                        events.add(d);
                        if (d.contains("\"text\"")) {
                            firstText.countDown();
                        }
                    })
                    .doFinally(s -> {
                        firstText.countDown();
                        done.countDown();
                    })
                    .subscribe(d -> { }, e -> events.add("transport error: " + e));
        }

        JsonNode error() {
            for (String e : events) {
                if (e.startsWith("{") && json.readTree(e).has("error")) {
                    return json.readTree(e).get("error");
                }
            }
            return null;
        }

        String finishReason() {
            for (String e : events) {
                if (e.startsWith("{")) {
                    JsonNode choices = json.readTree(e).get("choices");
                    if (choices != null && !choices.isEmpty() && !choices.get(0).get("finish_reason").isNull()) {
                        return choices.get(0).get("finish_reason").stringValue();
                    }
                }
            }
            return null;
        }
    }

    private double metric(String name, int rank) {
        return metric(name, "rank=\"" + rank + "\"");
    }

    /** A sample of the Prometheus scrape over HTTP: the line of {@code name} whose labels contain {@code label}. */
    private double metric(String name, String label) {
        String scrape = WebClient.create("http://localhost:" + port).get().uri("/actuator/prometheus").retrieve()
                .bodyToMono(String.class).block(Duration.ofSeconds(30));
        List<String> lines = scrape.lines().filter(l -> l.startsWith(name + "{") && l.contains(label)).toList();
        assertThat(lines).as(name + " with " + label).hasSize(1);
        return Double.parseDouble(lines.getFirst().substring(lines.getFirst().lastIndexOf(' ') + 1));
    }

    private static int[] prompt(int length, int seed) {
        return IntStream.range(0, length).map(i -> 20 + (i * 37 + i / 7 + seed * 101) % 1000).toArray();
    }
}
