package io.strata.platform.console;

import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.RankLoad;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The console's live data as JSON and server-sent events, under {@code /admin/api/console} (admins only;
 * POSTs need the CSRF header like every console change).
 */
@RestController
@RequestMapping("/admin/api/console")
public class ConsoleApiController {
    private static final Duration HEARTBEAT = Duration.ofSeconds(15);

    private final StatsSampler sampler;
    private final MinuteHistory history;
    private final EngineView engine;
    private final PluginHost plugins;
    private final FinishedRequests finished;
    private final ObjectMapper json;

    public ConsoleApiController(StatsSampler sampler, MinuteHistory history, EngineView engine, PluginHost plugins,
                                FinishedRequests finished, ObjectMapper json) {
        this.sampler = sampler;
        this.history = history;
        this.engine = engine;
        this.plugins = plugins;
        this.finished = finished;
        this.json = json;
    }

    /**
     * One {@code stats} event about every second; a comment every 15 s keeps idle proxies from closing it.
     * The events are written in heap buffers rather than the server's pooled ones: an event can be encoded on
     * the stats thread just as the browser goes away, and a buffer dropped by the cancelled write is then
     * garbage, not a leaked pooled buffer (paranoid leak detection saw that race on every write path of the
     * pooled variant: the first event, then any event).
     */
    @GetMapping(path = "/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<DataBuffer> stream() {
        Flux<DataBuffer> stats = sampler.stream().map(s -> event("event:stats\ndata:" + json.writeValueAsString(s) + "\n\n"));
        Flux<DataBuffer> beats = Flux.interval(HEARTBEAT).map(i -> event(":keep-alive\n\n"));
        // ends at shutdown: graceful shutdown waits for open responses, and this one would never end by itself
        return Flux.concat(Mono.fromSupplier(() -> event(":stats follow\n\n")), Flux.merge(stats, beats))
                .takeUntilOther(sampler.stopped());
    }

    private static DataBuffer event(String text) {
        return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * What the charts start from: stored minutes (survive restarts) and the last seconds of samples.
     *
     * @param minutes how far back the stored minutes go (1..10080)
     */
    @GetMapping("/history")
    public Mono<Map<String, Object>> history(@RequestParam(defaultValue = "180") int minutes) {
        int m = Math.max(1, Math.min(minutes, 7 * 24 * 60));
        return Mono.fromCallable(() -> Map.<String, Object>of(
                        "minutes", history.since(Instant.now().minus(Duration.ofMinutes(m))),
                        "recent", sampler.recent()))
                .subscribeOn(Schedulers.boundedElastic());
    }

    /** The served model and what it is ({@link ModelAbout}: its training card, or why there is none). */
    @GetMapping("/model")
    public Mono<Map<String, Object>> model() {
        return Mono.fromCallable(() -> {
            ModelCard card = engine.engine().model();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("id", card.id());
            body.put("root", card.root());
            body.put("maxModelLen", card.maxModelLen());
            body.put("vocabSize", card.vocabSize());
            body.put("about", ModelAbout.of(Path.of(card.root())));
            return body;
        }).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/requests/live")
    public List<EngineView.LiveRequest> live() {
        return engine.liveRequests();
    }

    /** Each engine rank's load (one entry unless {@code strata.engine.data-parallel-size} is above 1). */
    @GetMapping("/ranks")
    public List<RankLoad> ranks() {
        return engine.engine().rankLoads();
    }

    @PostMapping("/requests/{id}/abort")
    public ResponseEntity<Map<String, Object>> abort(@PathVariable String id) {
        return engine.abort(id)
                ? ResponseEntity.ok(Map.of("id", id, "aborted", true))
                : ResponseEntity.status(404).body(Map.of("error", "Request " + id + " is not running or waiting"));
    }

    @GetMapping("/requests/finished")
    public Mono<List<FinishedRequests.Entry>> finished(@RequestParam(required = false) String key,
                                                       @RequestParam(required = false) String reason,
                                                       @RequestParam(required = false) Integer sinceMinutes,
                                                       @RequestParam(defaultValue = "100") int limit,
                                                       @RequestParam(defaultValue = "0") int offset) {
        FinishedRequests.Filter filter = FinishedRequests.Filter.of(key, reason, sinceMinutes, limit, offset);
        return Mono.fromCallable(() -> finished.find(filter)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Every available backend with its devices, probed again now so free memory is current.
     * Probing runs off the event loop: a vendor probe may call into its driver.
     */
    @GetMapping("/devices")
    public Mono<List<BackendDevices>> devices() {
        return Mono.fromCallable(() -> {
            List<BackendDevices> out = new ArrayList<>();
            for (LoadedBackend b : plugins.availableBackends()) {
                ProbeResult p;
                String error = null;
                try {
                    p = b.provider().probe();
                } catch (RuntimeException e) {
                    p = b.probe();
                    error = "probe failed: " + e.getMessage();
                }
                out.add(new BackendDevices(b.pluginId(), b.provider().identity().name(), p.available(), p.reason(),
                        p.devices(), error, hostMemory()));
            }
            return out;
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * @param devices devices with total and (just probed) free memory
     * @param jvm     this process's heap, which the CPU backend's weights and KV pools live next to
     */
    public record BackendDevices(String pluginId, String name, boolean available, String reason, List<DeviceInfo> devices,
                                 String error, Map<String, Long> jvm) {
    }

    private static Map<String, Long> hostMemory() {
        Runtime rt = Runtime.getRuntime();
        return Map.of("heapUsedBytes", rt.totalMemory() - rt.freeMemory(), "heapMaxBytes", rt.maxMemory());
    }
}
