package io.strata.platform.console;

import io.strata.platform.engine.ServingBackend;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.spi.DeviceInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Samples the engine once a second on a thread of its own and hands each {@link LiveStats} to the
 * browsers' event streams and to {@link MinuteHistory}. One sampler serves every open dashboard, so
 * the cost does not grow with the number of viewers.
 */
@Component
public class StatsSampler implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(StatsSampler.class);
    static final int LATENCY_WINDOW_SECONDS = 10;
    /** Seconds of samples kept for a dashboard that opens now (its charts start with them). */
    static final int RECENT = 600;

    private final EngineView engine;
    private final MeterRegistry registry;
    private final PluginHost plugins;
    private final ServingBackend serving;
    private final MinuteHistory history;
    private final String version;
    private final Sinks.Many<LiveStats> sink = Sinks.many().multicast().directBestEffort();
    private final Sinks.One<Boolean> stopped = Sinks.one();
    private final Deque<MeterReadings> readings = new ArrayDeque<>();
    private final Deque<LiveStats> recent = new ArrayDeque<>();
    private ScheduledExecutorService timer;
    private volatile LiveStats latest;

    public StatsSampler(EngineView engine, MeterRegistry registry, PluginHost plugins, ServingBackend serving,
                        MinuteHistory history, ObjectProvider<BuildProperties> build) {
        this.engine = engine;
        this.registry = registry;
        this.plugins = plugins;
        this.serving = serving;
        this.history = history;
        BuildProperties b = build.getIfAvailable();
        String fromJar = StatsSampler.class.getPackage().getImplementationVersion();
        this.version = b != null ? b.getVersion() : fromJar != null ? fromJar : "dev";
    }

    /** The newest sample, then one per second. */
    public Flux<LiveStats> stream() {
        return Flux.concat(Mono.justOrEmpty(latest), sink.asFlux());
    }

    /** Emits once when the sampler stops (shutdown), so open event streams end and do not hold up the drain. */
    public Mono<Boolean> stopped() {
        return stopped.asMono();
    }

    /** The last {@link #RECENT} seconds of samples, oldest first. */
    public synchronized List<LiveStats> recent() {
        return new ArrayList<>(recent);
    }

    public Optional<LiveStats> latest() {
        return Optional.ofNullable(latest);
    }

    /** Takes one sample now (the timer calls this every second). */
    public synchronized LiveStats sample() {
        MeterReadings now = MeterReadings.read(registry);
        MeterReadings previous = readings.isEmpty() ? now : readings.peekLast();
        MeterReadings windowStart = readings.isEmpty() ? now : readings.peekFirst();
        for (MeterReadings r : readings) {
            if (now.nanos() - r.nanos() <= TimeUnit.SECONDS.toNanos(LATENCY_WINDOW_SECONDS)) {
                windowStart = r;
                break;
            }
        }
        readings.addLast(now);
        while (readings.size() > LATENCY_WINDOW_SECONDS + 1) {
            readings.removeFirst();
        }
        double dt = now.seconds(previous);
        LiveStats stats = new LiveStats(System.currentTimeMillis(), health(), engine.buckets(), prefix(now),
                new LiveStats.Load(engine.running(), engine.waiting(), engine.preemptedWaiting(), now.preemptions(),
                        now.aborted(), now.finished(),
                        previous == now ? 0 : (now.finished() - previous.finished()) / dt,
                        previous == now ? 0 : (now.promptTokens() - previous.promptTokens()) / dt,
                        previous == now ? 0 : (now.generationTokens() - previous.generationTokens()) / dt),
                new LiveStats.Latency(now.ttftPercentile(windowStart, 0.5), now.ttftPercentile(windowStart, 0.99),
                        now.itlPercentile(windowStart, 0.5), now.itlPercentile(windowStart, 0.99)));
        latest = stats;
        recent.addLast(stats);
        while (recent.size() > RECENT) {
            recent.removeFirst();
        }
        history.record(stats, now);
        sink.tryEmitNext(stats);
        return stats;
    }

    private LiveStats.Prefix prefix(MeterReadings m) {
        Double cachedShare = m.promptTokens() == 0 ? null : (double) m.cachedTokens() / m.promptTokens();
        Optional<KvCacheStats.Reading> kv = engine.prefixStats();
        if (kv.isPresent()) {
            KvCacheStats.Reading s = kv.get();
            long q = s.queries();
            long h = s.hits();
            return new LiveStats.Prefix(s.requestsInWindow() == 0 ? null : s.hitRateLastRequests(), s.requestsInWindow(),
                    q == 0 ? null : (double) h / q, q, h, cachedShare);
        }
        // no manager: the engine's counters of finished requests are all there is
        return new LiveStats.Prefix(null, 0, cachedShare, m.promptTokens(), m.cachedTokens(), cachedShare);
    }

    private LiveStats.Health health() {
        InferenceEngine e = engine.engine();
        InferenceEngine.EngineStatus status = e.status();
        // the backend that serves and its device; with none serving, what is available
        String backends = serving.serving().map(s -> s.pluginId() + " on " + s.device()).orElseGet(() -> {
            String available = plugins.availableBackends().stream().map(StatsSampler::describe)
                    .collect(Collectors.joining("; "));
            return available.isEmpty() ? "none available" : "none serving (available: " + available + ")";
        });
        return new LiveStats.Health(status.up(), status.detail(), backends,
                e.model().id(), e.model().maxModelLen(), ManagementFactory.getRuntimeMXBean().getUptime() / 1000,
                version);
    }

    private static String describe(LoadedBackend b) {
        List<DeviceInfo> devices = b.probe().devices();
        return b.pluginId() + ": " + (devices.isEmpty() ? "no device"
                : devices.stream().map(DeviceInfo::name).collect(Collectors.joining(", ")));
    }

    @Override
    public synchronized void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("strata-console-stats").unstarted(r));
        timer.scheduleAtFixedRate(() -> {
            try {
                sample();
            } catch (RuntimeException e) {
                // a sample that fails (engine restarting, DB busy) must not stop the next one
                log.warn("Console stats sample failed: {}", e.toString());
            }
        }, 0, 1, TimeUnit.SECONDS);
    }

    @Override
    public synchronized void stop() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
        history.flush();
        stopped.tryEmitValue(true);
        sink.tryEmitComplete();
    }

    @Override
    public synchronized boolean isRunning() {
        return timer != null;
    }
}
