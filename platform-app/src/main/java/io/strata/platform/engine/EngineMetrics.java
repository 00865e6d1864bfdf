package io.strata.platform.engine;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Engine metrics with vLLM's semantics (anchors.md §B1) under the {@code strata_} prefix, labelled
 * {@code model_name}. Histogram buckets are vLLM's, so its Grafana queries carry over by renaming the
 * prefix. Documented in docs/operations.md ("Engine and API metrics").
 */
final class EngineMetrics {
    private static final double[] TTFT = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
            2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
    private static final double[] ITL = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
            5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
    private static final double[] E2E = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
            60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
    private static final double[] STEP_TOKENS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

    private final Counter promptTokens;
    private final Counter generationTokens;
    private final Counter cachedTokens;
    private final Counter preemptions;
    private final Counter stepFailures;
    private final Map<FinishReason, Counter> outcomes = new EnumMap<>(FinishReason.class);
    private final Timer ttft;
    private final Timer itl;
    private final Timer e2e;
    private final Timer queue;
    private final DistributionSummary stepTokens;

    /**
     * @param extra tags added to every meter ({@code rank} for a data-parallel rank, else none)
     */
    EngineMetrics(MeterRegistry registry, String model, Tags extra, Supplier<Number> running, Supplier<Number> waiting,
                  Supplier<Number> kvUsage) {
        Tags tags = Tags.of("model_name", model).and(extra);
        Gauge.builder("strata.num_requests_running", running).tags(tags)
                .description("Sequences in the running batch").register(registry);
        Gauge.builder("strata.num_requests_waiting", waiting).tags(tags)
                .description("Sequences waiting to be scheduled (incl. preempted)").register(registry);
        Gauge.builder("strata.kv_cache_usage_perc", kvUsage).tags(tags)
                .description("Fraction of KV pages pinned by live sequences (cached-but-free pages count as free)")
                .register(registry);
        promptTokens = Counter.builder("strata.prompt_tokens").tags(tags).description("Prefill tokens of finished requests").register(registry);
        generationTokens = Counter.builder("strata.generation_tokens").tags(tags).description("Generated tokens").register(registry);
        cachedTokens = Counter.builder("strata.prompt_tokens_cached").tags(tags).description("Prompt tokens served from the prefix cache").register(registry);
        preemptions = Counter.builder("strata.num_preemptions").tags(tags).description("Preemptions (recompute)").register(registry);
        stepFailures = Counter.builder("strata.engine_step_failures").tags(tags).description("Engine steps whose backend call failed").register(registry);
        for (FinishReason r : FinishReason.values()) {
            outcomes.put(r, Counter.builder("strata.request_success").tags(tags.and("finished_reason", r.wire()))
                    .description("Finished choices by finish reason").register(registry));
        }
        ttft = timer(registry, "strata.time_to_first_token", "Time to first token", TTFT, tags);
        itl = timer(registry, "strata.inter_token_latency", "Time between consecutive output tokens", ITL, tags);
        e2e = timer(registry, "strata.e2e_request_latency", "Arrival to finish", E2E, tags);
        queue = timer(registry, "strata.request_queue_time", "Arrival to first scheduling", E2E, tags);
        stepTokens = DistributionSummary.builder("strata.iteration_tokens").tags(tags)
                .description("Tokens per engine step").serviceLevelObjectives(STEP_TOKENS).register(registry);
    }

    private static Timer timer(MeterRegistry registry, String name, String help, double[] buckets, Tags tags) {
        Duration[] slo = new Duration[buckets.length];
        for (int i = 0; i < buckets.length; i++) {
            slo[i] = Duration.ofNanos((long) (buckets[i] * 1e9));
        }
        return Timer.builder(name).tags(tags).description(help).serviceLevelObjectives(slo)
                .minimumExpectedValue(slo[0]).maximumExpectedValue(slo[slo.length - 1]).register(registry);
    }

    void step(int tokens) {
        stepTokens.record(tokens);
    }

    void stepFailed() {
        stepFailures.increment();
    }

    void preempted(int n) {
        preemptions.increment(n);
    }

    void firstToken(long nanos) {
        ttft.record(Duration.ofNanos(nanos));
    }

    void interToken(long nanos) {
        itl.record(Duration.ofNanos(nanos));
    }

    void queued(long nanos) {
        queue.record(Duration.ofNanos(nanos));
    }

    void generated() {
        generationTokens.increment();
    }

    void finished(FinishReason reason, int prompt, int cached, long e2eNanos) {
        outcomes.get(reason).increment();
        promptTokens.increment(prompt);
        if (cached > 0) {
            cachedTokens.increment(cached);
        }
        e2e.record(Duration.ofNanos(e2eNanos));
    }
}
