package io.strata.platform.engine;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ModelConfigParser;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvCapacity;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.tokenizer.ModelTokenizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine loop with the real KV cache manager, tokenizer and sampler over a scripted model. */
class ServingEngineTest {
    private static final Path MODEL = Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
    private static ModelTokenizer tokenizer;
    private static KvLayout layout;

    private ServingEngine engine;
    private KvCacheManager kv;
    private ScriptedStepRunner executor;
    private SimpleMeterRegistry registry;

    @BeforeAll
    static void loadModel() throws Exception {
        tokenizer = ModelTokenizer.load(MODEL);
        ModelConfig config = ModelConfigParser.parse(MODEL.resolve("config.json"));
        layout = KvLayout.of(KvModelShape.of("tiny", config), KvPrecision.DEFAULT);
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @AfterEach
    void stop() throws Exception {
        if (engine != null) {
            engine.close();
        }
    }

    private void start(double sequencesOf1024, EngineProperties props) {
        start(sequencesOf1024, props, SamplingProperties.defaults());
    }

    private void start(double sequencesOf1024, EngineProperties props, SamplingProperties sampling) {
        start(sequencesOf1024, props, sampling, () -> { });
    }

    private void start(double sequencesOf1024, EngineProperties props, SamplingProperties sampling, AutoCloseable onClose) {
        // the exact peak of one 1,024-token sequence under this scheduler's chunking
        long[] d = new KvCapacity(layout, new KvPoolSizes(0, 0, 0)).peakDemand(1024, props.chunkLimit());
        KvPoolSizes sizes = new KvPoolSizes((int) Math.ceil(d[0] * sequencesOf1024), (int) Math.ceil(d[1] * sequencesOf1024),
                (int) Math.ceil(d[2] * sequencesOf1024));
        kv = new KvCacheManager(layout, sizes, true);
        executor = new ScriptedStepRunner(1024, 14, tokenizer.specialTokens().eos());
        registry = new SimpleMeterRegistry();
        engine = new ServingEngine(new ModelCard("tiny", MODEL.toString(), 2048, 1024, 0), new TokenizerCodec(tokenizer),
                props, kv, executor, registry, onClose, EngineRank.SINGLE, sampling);
    }

    private static SamplingParams greedy(int maxTokens) {
        return SamplingParams.greedy(maxTokens);
    }

    private static SamplingParams seeded(int maxTokens, long seed) {
        return SamplingParams.builder().temperature(0.8).topP(0.95).seed(seed).maxTokens(maxTokens).build();
    }

    private int[] prompt(String text) {
        return new TokenizerCodec(tokenizer).encode(text, true);
    }

    /** Collects one choice to the end. */
    private record Result(List<Integer> tokens, String text, GenerationEvent.Finished finished) {
    }

    private static Result collect(InferenceEngine.Submission s) {
        List<GenerationEvent> events = s.events().collectList().block(Duration.ofSeconds(60));
        List<Integer> tokens = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        GenerationEvent.Finished fin = null;
        for (GenerationEvent e : events) {
            if (e instanceof GenerationEvent.Delta d) {
                for (int t : d.tokens()) {
                    tokens.add(t);
                }
                text.append(d.text());
            } else if (e instanceof GenerationEvent.Finished f) {
                fin = f;
            }
        }
        return new Result(tokens, text.toString(), fin);
    }

    private void awaitNoLeak() throws InterruptedException {
        for (int i = 0; i < 500 && (engine.inFlight() > 0 || !engine.kvUsage().allFreeOrCached()); i++) {
            Thread.sleep(10);
        }
        assertThat(engine.inFlight()).isZero();
        assertThat(engine.kvUsage().allFreeOrCached()).as(engine.kvUsage().toString()).isTrue();
    }

    @Test
    void limitsSavedWhileServingApplyWithoutRestart() throws Exception {
        start(4, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"));
        int[] p = prompt("def fib(n):");
        // queue limit: applies to the next submission
        engine.applyLimits(new EngineProperties(512, 8, 1, 1_000_000L, "fcfs"));
        InferenceEngine.Submission first = engine.submit(new GenerationRequest("q1", p, greedy(300), 0, null));
        assertThatThrownBy(() -> engine.submit(new GenerationRequest("q2", p, greedy(5), 0, null)))
                .isInstanceOf(QueueFullException.class).hasMessageContaining("max-queued-requests=1");
        first.abort();
        awaitNoLeak();
        // scheduler limit: from the next step on, at most one sequence runs
        engine.applyLimits(new EngineProperties(512, 1, 100, 1_000_000L, "fcfs"));
        assertThat(engine.limits().maxNumSeqs()).isEqualTo(1);
        executor.stepDelay(2);
        List<InferenceEngine.Submission> subs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            subs.add(engine.submit(new GenerationRequest("s" + i, p, greedy(40), 0, "salt" + i)));
        }
        int maxRunning = 0;
        while (engine.inFlight() > 0) {
            maxRunning = Math.max(maxRunning, engine.runningCount());
            Thread.sleep(1);
        }
        for (InferenceEngine.Submission s : subs) {
            assertThat(collect(s).finished().reason()).isEqualTo(FinishReason.LENGTH);
        }
        assertThat(maxRunning).isEqualTo(1);
        assertThatThrownBy(() -> engine.applyLimits(new EngineProperties(512, 1, 100, 1_000_000L, "priority")))
                .hasMessageContaining("policy");
        awaitNoLeak();
    }

    @Test
    void exhaustedPoolsPreemptTheNewestAndRecomputeGivesTheSameOutput() throws Exception {
        // short prompts are admitted together; their long outputs then outgrow pools sized for ~1.3 sequences
        start(1.3, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"));
        int[] p = prompt("def fib(n):");
        Result alone = collect(engine.submit(new GenerationRequest("alone", p, greedy(1000), 0, null)));
        List<InferenceEngine.Submission> subs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            subs.add(engine.submit(new GenerationRequest("r" + i, p, greedy(1000), 0, "salt" + i)));
        }
        for (InferenceEngine.Submission s : subs) {
            Result r = collect(s);
            assertThat(r.finished().reason()).as(String.valueOf(r.finished().error())).isEqualTo(FinishReason.LENGTH);
            assertThat(r.tokens()).isEqualTo(alone.tokens());
        }
        assertThat(registry.get("strata.num_preemptions").counter().count()).isPositive();
        awaitNoLeak();
    }

    @Test
    void aSequencePreemptedWhileScoringItsPromptScoresAllOfItAfterwards() throws Exception {
        // Admission checks each prompt against the pages free at the time, so two prompts admitted together,
        // each prefilled in 64-token chunks, outgrow pools sized for 1.3 sequences: the newer one, scoring
        // its prompt, is preempted part-way, and when it comes back the other has published the blocks of
        // their common prefix.
        start(1.3, new EngineProperties(128, 8, 100, 1_000_000L, "fcfs", 64));
        int[] p = IntStream.range(0, 600).map(i -> 14 + (i * 37 + i / 5) % 1000).toArray();
        SamplingParams scoring = SamplingParams.builder().temperature(0).maxTokens(1).promptLogprobs(0).build();
        GenerationEvent.Started alone = started(engine.submit(new GenerationRequest("alone", p, scoring, 0, "alone")));
        // both are queued while the engine is inside a slow step of a one-token request, so the next step
        // admits them together
        executor.stepDelay(30);
        InferenceEngine.Submission blocker = engine.submit(new GenerationRequest("blocker", prompt("x"), greedy(2), 0, null));
        Thread.sleep(10);
        InferenceEngine.Submission plain = engine.submit(new GenerationRequest("plain", Arrays.copyOf(p, 520),
                greedy(1), 0, null));
        InferenceEngine.Submission scored = engine.submit(new GenerationRequest("scored", p, scoring, 0, null));
        assertThat(collect(blocker).finished().reason()).isEqualTo(FinishReason.LENGTH);
        assertThat(collect(plain).finished().reason()).isEqualTo(FinishReason.LENGTH);
        GenerationEvent.Started s = started(scored);
        assertThat(registry.get("strata.num_preemptions").counter().count()).isPositive();
        assertThat(s.promptLogprobs()).hasSize(600).isEqualTo(alone.promptLogprobs());
        assertThat(s.cachedTokens()).isZero();
        awaitNoLeak();
    }

    private static GenerationEvent.Started started(InferenceEngine.Submission s) {
        List<GenerationEvent> events = s.events().collectList().block(Duration.ofSeconds(60));
        return events.stream().filter(e -> e instanceof GenerationEvent.Started).map(e -> (GenerationEvent.Started) e)
                .findFirst().orElseThrow();
    }

    @Test
    void aSequenceThePoolsCanNeverHoldIsRejectedAtSubmission() throws Exception {
        start(0.5, new EngineProperties(256, 8, 100, 1_000_000L, "fcfs"));
        int[] p = prompt("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n".repeat(15));
        assertThatThrownBy(() -> engine.submit(new GenerationRequest("huge", p, greedy(1024 - p.length), 0, null)))
                .isInstanceOfSatisfying(io.strata.platform.engine.sampling.SamplingParameterException.class,
                        e -> assertThat(e.param()).isEqualTo("max_tokens"))
                .hasMessageContaining("KV cache");
        assertThat(engine.inFlight()).isZero();
    }

    @Test
    void closeDuringALongStepReleasesTheBackendOnceTheStepReturns() throws Exception {
        CountDownLatch released = new CountDownLatch(1);
        AtomicInteger releases = new AtomicInteger();
        AtomicReference<String> releasedBy = new AtomicReference<>();
        AtomicInteger stepsWhenReleased = new AtomicInteger(-1);
        start(4, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"), SamplingProperties.defaults(), () -> {
            releasedBy.set(Thread.currentThread().getName());
            stepsWhenReleased.set(executor.steps());
            releases.incrementAndGet();
            released.countDown();
        });
        executor.stepDelay(1_500);
        InferenceEngine.Submission s = engine.submit(new GenerationRequest("slow", prompt("print(1)\n"), greedy(8), 0, null));
        for (int i = 0; i < 200 && executor.steps() == 0; i++) {
            Thread.sleep(10);
        }
        assertThat(executor.steps()).as("a step is running").isEqualTo(1);

        long t0 = System.nanoTime();
        engine.close(Duration.ofMillis(100));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("close stops waiting").isLessThan(Duration.ofMillis(1_000));
        assertThat(released.getCount()).as("the backend is not released under a running step").isEqualTo(1);

        assertThat(released.await(10, TimeUnit.SECONDS)).as("released once the step returned").isTrue();
        assertThat(releasedBy.get()).isEqualTo("strata-engine");
        assertThat(stepsWhenReleased.get()).as("no step after the stop").isEqualTo(1);
        Result r = collect(s);
        assertThat(r.finished().reason()).isEqualTo(FinishReason.ABORT);
        engine.close();  // a second close waits for nothing and releases nothing again
        assertThat(releases.get()).isEqualTo(1);
        engine = null;
    }

    @Test
    void chunkedPrefillSplitsLongPromptsUnderTheTokenBudget() throws Exception {
        start(4, new EngineProperties(64, 8, 100, 1_000_000L, "fcfs"));
        int[] p = prompt("x".repeat(10) + " = [i * i for i in range(100)]\n".repeat(10));
        assertThat(p.length).isGreaterThan(128);
        int before = executor.steps();
        Result r = collect(engine.submit(new GenerationRequest("long", p, greedy(3), 0, null)));
        assertThat(r.tokens()).hasSize(3);
        // ceil(prompt / 64) prefill steps, the last of which samples the first token, then 2 decode steps
        assertThat(executor.steps() - before).isEqualTo((p.length + 63) / 64 + 2);
        awaitNoLeak();
    }

    @Test
    void seededSamplingDoesNotDependOnWhatElseIsInTheBatch() throws Exception {
        start(4, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"));
        int[] p = prompt("import random\n");
        Result alone = collect(engine.submit(new GenerationRequest("a", p, seeded(40, 7), 0, null)));
        List<InferenceEngine.Submission> noise = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            noise.add(engine.submit(new GenerationRequest("n" + i, prompt("noise " + i), seeded(60, 100 + i), 0, null)));
        }
        Result busy = collect(engine.submit(new GenerationRequest("b", p, seeded(40, 7), 0, null)));
        noise.forEach(InferenceEngine.Submission::abort);
        assertThat(busy.tokens()).isEqualTo(alone.tokens());
        Result other = collect(engine.submit(new GenerationRequest("c", p, seeded(40, 8), 0, null)));
        assertThat(other.tokens()).isNotEqualTo(alone.tokens());
        awaitNoLeak();
    }

    @Test
    void manyRequestsSampledOnFourThreadsGetWhatOneThreadGives() throws Exception {
        List<String> one = manyMixedRequests(1);
        assertThat(engine.parallelSampledSteps()).isZero();
        engine.close();
        List<String> four = manyMixedRequests(4);
        // the steps of 24 running choices reach the parallel path
        assertThat(engine.parallelSampledSteps()).isPositive();
        assertThat(four).isEqualTo(one);
        // the requests differ, so equal lists are no accident of every request giving the same text
        assertThat(Set.copyOf(one)).hasSizeGreaterThan(12);
    }

    /**
     * 24 choices at once, sampled every way (greedy, seeded temperature, top-k, top-p, penalties, logprobs), on an
     * engine with {@code threads} sampling threads: per request its text, tokens and logprobs.
     */
    private List<String> manyMixedRequests(int threads) throws Exception {
        start(24, new EngineProperties(2048, 32, 100, 1_000_000L, "fcfs"), new SamplingProperties(threads));
        executor.stepDelay(1);
        List<InferenceEngine.Submission> subs = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            SamplingParams.Builder b = SamplingParams.builder().maxTokens(40).seed(100L + i);
            switch (i % 6) {
                case 0 -> b.temperature(0);
                case 1 -> b.temperature(0.8).topP(0.95);
                case 2 -> b.temperature(1.2).topK(20).logprobs(3);
                case 3 -> b.temperature(1.0).presencePenalty(0.6).frequencyPenalty(0.3).repetitionPenalty(1.2);
                case 4 -> b.temperature(0.9).topK(50).topP(0.8).minP(0.05).logprobs(0);
                default -> b.temperature(1.5);
            }
            subs.add(engine.submit(new GenerationRequest("m" + i, prompt("request " + i + ":"), b.build(), 0, null)));
        }
        List<String> out = new ArrayList<>();
        for (InferenceEngine.Submission s : subs) {
            StringBuilder r = new StringBuilder();
            for (GenerationEvent e : s.events().collectList().block(Duration.ofSeconds(60))) {
                if (e instanceof GenerationEvent.Delta d) {
                    r.append(Arrays.toString(d.tokens())).append(d.text());
                    if (d.logprobs() != null) {
                        for (SampledToken t : d.logprobs()) {
                            r.append(t.logprob()).append('/').append(t.rank()).append(Arrays.toString(t.top().tokens()))
                                    .append(Arrays.toString(t.top().logprobs()));
                        }
                    }
                } else if (e instanceof GenerationEvent.Finished f) {
                    assertThat(f.reason()).as(String.valueOf(f.error())).isEqualTo(FinishReason.LENGTH);
                }
            }
            out.add(r.toString());
        }
        awaitNoLeak();
        return out;
    }

    @Test
    void abortFreesPagesAtOnceAndCountsAsAbort() throws Exception {
        start(4, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"));
        executor.stepDelay(5);
        InferenceEngine.Submission s = engine.submit(new GenerationRequest("x", prompt("while True:\n"), greedy(2000), 0, null));
        List<GenerationEvent> seen = new ArrayList<>();
        reactor.core.Disposable d = s.events().subscribe(seen::add);
        for (int i = 0; i < 500 && engine.kvUsage().usedPages() == 0; i++) {
            Thread.sleep(5);
        }
        assertThat(engine.kvUsage().usedPages()).isPositive();
        d.dispose();
        awaitNoLeak();
        assertThat(registry.get("strata.request_success").tag("finished_reason", "abort").counter().count()).isEqualTo(1);
    }

    @Test
    void aFailingStepFailsItsSequencesAndThreeInARowMarkTheBackendDown() throws Exception {
        start(4, new EngineProperties(512, 8, 100, 1_000_000L, "fcfs"));
        int poison = prompt("@")[1];
        executor.failWhenInputContains(t -> t == poison);
        Result failed = collect(engine.submit(new GenerationRequest("bad", prompt("@"), greedy(5), 0, null)));
        assertThat(failed.finished().reason()).isEqualTo(FinishReason.ERROR);
        assertThat(failed.finished().error()).contains("scripted backend failure");
        Result ok = collect(engine.submit(new GenerationRequest("good", prompt("fine"), greedy(5), 0, null)));
        assertThat(ok.finished().reason()).isEqualTo(FinishReason.LENGTH);
        assertThat(engine.status().up()).isTrue();
        for (int i = 0; i < 3; i++) {
            collect(engine.submit(new GenerationRequest("bad" + i, prompt("@"), greedy(5), 0, null)));
        }
        assertThat(engine.status().up()).isFalse();
        assertThat(engine.status().detail()).contains("3 steps in a row");
        assertThatThrownBy(() -> engine.submit(new GenerationRequest("late", prompt("x"), greedy(5), 0, null)))
                .isInstanceOf(EngineUnavailableException.class);
        awaitNoLeak();
    }

    @Test
    void queueLimitsRejectWithQueueFull() throws Exception {
        start(4, new EngineProperties(512, 8, 2, 50L, "fcfs"));
        executor.stepDelay(20);
        InferenceEngine.Submission a = engine.submit(new GenerationRequest("a", prompt("one"), greedy(1000), 0, null));
        assertThatThrownBy(() -> engine.submit(new GenerationRequest("big", prompt("y".repeat(10) + " z".repeat(60)), greedy(5), 0, null)))
                .isInstanceOf(QueueFullException.class).hasMessageContaining("max-queued-tokens");
        InferenceEngine.Submission b = engine.submit(new GenerationRequest("b", prompt("two"), greedy(1000), 0, null));
        assertThatThrownBy(() -> engine.submit(new GenerationRequest("c", prompt("three"), greedy(5), 0, null)))
                .isInstanceOf(QueueFullException.class).hasMessageContaining("max-queued-requests");
        a.abort();
        b.abort();
        awaitNoLeak();
    }

    @Test
    void priorityPolicyRunsLowerValuesFirst() throws Exception {
        start(4, new EngineProperties(512, 1, 100, 1_000_000L, "priority"));
        executor.stepDelay(2);
        InferenceEngine.Submission first = engine.submit(new GenerationRequest("first", prompt("a"), greedy(30), 5, null));
        Thread.sleep(30);
        InferenceEngine.Submission low = engine.submit(new GenerationRequest("low", prompt("b"), greedy(5), 9, null));
        InferenceEngine.Submission high = engine.submit(new GenerationRequest("high", prompt("c"), greedy(5), 1, null));
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        reactor.core.publisher.Flux.merge(
                first.events().filter(e -> e instanceof GenerationEvent.Finished).map(e -> "first"),
                low.events().filter(e -> e instanceof GenerationEvent.Finished).map(e -> "low"),
                high.events().filter(e -> e instanceof GenerationEvent.Finished).map(e -> "high"))
                .doOnNext(order::add).blockLast(Duration.ofSeconds(60));
        assertThat(order).containsExactly("first", "high", "low");
        awaitNoLeak();
    }
}
