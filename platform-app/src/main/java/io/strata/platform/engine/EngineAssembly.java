package io.strata.platform.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvCacheMetrics;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.workers.RemoteExecutor;
import io.strata.platform.workers.WorkerLaunch;
import io.strata.platform.workers.WorkerProperties;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Puts a loaded model on an execution backend: loads the weights, sizes the three KV pools from the
 * memory the backend offers (split by the KV manager's rule at the target context), has the backend
 * allocate them, and starts the engine loop.
 */
final class EngineAssembly {
    private static final Logger log = LoggerFactory.getLogger(EngineAssembly.class);

    private EngineAssembly() {
    }

    /**
     * Where the backend runs: in the platform's JVM, or ({@code strata.engine.worker-process}) in a worker process
     * started from the plugin's jar.
     *
     * @param pluginJars the jar of a plugin id, as the plugin host loaded it
     */
    record Workers(WorkerProperties props, java.util.function.Function<String, Optional<Path>> pluginJars) {
        static final Workers IN_PROCESS = new Workers(WorkerProperties.off(), id -> Optional.empty());
    }

    /**
     * KV bytes to allocate: what the backend offers after the weights, capped by {@code strata.kv.memory-bytes}
     * when set, and by default at what {@code max-num-seqs} sequences of the target length need (more would
     * only hold extra prefix cache, and on a CPU backend the offer is most of the host's memory).
     */
    static long kvBudget(KvLayout layout, long offered, long configured, long targetContext, int maxNumSeqs) {
        if (configured > 0) {
            return Math.min(configured, offered);
        }
        long[] demand = KvPoolSizes.demand(layout, targetContext);
        long perSequence = 0;
        for (io.strata.kv.BucketLayout b : layout.buckets()) {
            perSequence += demand[b.bucket().ordinal()] * b.rowBytes();
        }
        return Math.min(offered, perSequence * maxNumSeqs);
    }

    /**
     * Loads the model on {@code backend} and starts the engine over it. When loading or allocating the KV
     * pools fails, whatever the backend already holds is released and the exception is rethrown.
     *
     * @param settings the backend's own {@code strata.<plugin id>.*} settings
     * @param serving  receives the backend, its device and pools once the engine runs
     */
    static ServingEngine start(EngineConfiguration.ServedModel model, TokenizerCodec codec, LoadedBackend backend,
                               EngineProperties props, KvProperties kvProps, Map<String, String> settings,
                               MeterRegistry registry, ServingBackend serving) {
        return startRank(model, codec, backend, props, kvProps, settings, registry, serving, EngineRank.SINGLE,
                new long[1], Workers.IN_PROCESS, SamplingProperties.defaults());
    }

    /**
     * Starts {@code ranks} engines on {@code backend} behind one {@link DataParallelEngine}; with one rank, the
     * single engine. Each rank loads its own executor — in the platform's JVM, or with {@code workers} on in a
     * supervised worker process of its own ({@code worker-<rank>}, {@link RemoteExecutor}) — and allocates its
     * own pools; the KV budget of a rank is the first rank's offer divided by the ranks (they share one host or
     * device here), and {@code strata.kv.memory-bytes}, when set, is the total over all ranks. If a rank fails to
     * start, the ranks already started are closed and the exception is rethrown. Each rank samples on a pool of
     * its own of {@code sampling}'s size.
     */
    static InferenceEngine start(EngineConfiguration.ServedModel model, TokenizerCodec codec, LoadedBackend backend,
                                 EngineProperties props, KvProperties kvProps, Map<String, String> settings,
                                 MeterRegistry registry, ServingBackend serving, int ranks, Workers workers,
                                 SamplingProperties sampling) {
        if (ranks == 1) {
            return startRank(model, codec, backend, props, kvProps, settings, registry, serving, EngineRank.SINGLE,
                    new long[1], workers, sampling);
        }
        List<ServingEngine> started = new ArrayList<>();
        long[] firstOffer = new long[1];
        try {
            for (int r = 0; r < ranks; r++) {
                started.add(startRank(model, codec, backend, props, kvProps, settings, registry, serving,
                        new EngineRank(r, ranks), firstOffer, workers, sampling));
            }
        } catch (RuntimeException | Error e) {
            for (ServingEngine s : started) {
                try {
                    s.close();
                } catch (Exception | Error closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
        log.info("Serving {} on {} data-parallel ranks", model.card().id(), ranks);
        return new DataParallelEngine(started, new RankRouter(model.card().id()));
    }

    /**
     * @param firstOffer the KV bytes rank 0's executor offered (written by rank 0, read by the others)
     */
    private static ServingEngine startRank(EngineConfiguration.ServedModel model, TokenizerCodec codec,
                                           LoadedBackend backend, EngineProperties props, KvProperties kvProps,
                                           Map<String, String> settings, MeterRegistry registry, ServingBackend serving,
                                           EngineRank rank, long[] firstOffer, Workers workers,
                                           SamplingProperties sampling) {
        ModelExecutor executor;
        if (workers.props().workerProcess()) {
            Path jar = workers.pluginJars().apply(backend.pluginId()).orElseThrow(() -> new IllegalStateException(
                    "backend '" + backend.pluginId() + "' has no plugin jar to start a worker process from"));
            WorkerLaunch launch = new WorkerLaunch("worker-" + rank.index(), jar, backend.pluginId(), model.dir(),
                    model.card().id(), props.maxNumBatchedTokens(), props.maxNumSeqs(), settings,
                    WorkerLaunch.parseOptions(workers.props().workerJvmOptions()));
            executor = RemoteExecutor.start(launch, model.config(), workers.props(), registry, serving::worker);
        } else {
            ExecutionBackend exec = (ExecutionBackend) backend.provider();
            executor = exec.load(model.config(), model.checkpoint(), new LoadOptions(model.card().id(),
                    props.maxNumBatchedTokens(), props.maxNumSeqs(), 0, settings));
        }
        KvLayout layout;
        KvPoolSizes sizes;
        KvPools pools;
        long budget;
        Optional<DeviceMemory> device;
        try {
            layout = KvLayout.of(KvModelShape.of(model.card().id(), model.config()), KvPrecision.parse(kvProps.dtype()));
            BackendCapabilities caps = executor.capabilities();
            long target = Math.max(kvProps.targetContext(), model.card().maxModelLen());
            if (rank.index() == 0) {
                firstOffer[0] = caps.kvMemoryBytes();
            }
            budget = kvBudget(layout, Math.min(caps.kvMemoryBytes(), firstOffer[0] / rank.count()),
                    kvProps.memoryBytes() / rank.count(), target, props.maxNumSeqs());
            sizes = KvPoolSizes.forBudget(layout, budget, target);
            Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);
            for (PageBucket b : PageBucket.values()) {
                if (layout.hasBucket(b)) {
                    pages.put(b, sizes.pages(b));
                }
            }
            pools = executor.allocateKv(layout, pages);
            device = executor.deviceMemory();
        } catch (RuntimeException | Error e) {
            closeQuietly(executor, backend.pluginId());
            throw e;
        }
        KvCacheManager manager = new KvCacheManager(layout, sizes, kvProps.prefixCaching());
        List<ServingBackend.Pool> rows = new ArrayList<>();
        for (PageBucket b : PageBucket.values()) {
            if (pools.pages().containsKey(b)) {
                // the console's Serving backend card shows the pools of all ranks together
                rows.add(new ServingBackend.Pool(b.metricName(), pools.pages().get(b) * rank.count(),
                        pools.bytes().getOrDefault(b, 0L) * rank.count()));
            }
        }
        String deviceName = device.map(DeviceMemory::device).orElse("host memory");
        log.info("Serving {} on backend '{}' ({}){}: weights {} MiB, KV pools {} ({} MiB; budget {} MiB)", model.card().id(),
                backend.pluginId(), deviceName, rank.dataParallel() ? " rank " + rank.index() + "/" + rank.count() : "",
                executor.weightBytes() >> 20, pools.pages(), pools.totalBytes() >> 20, budget >> 20);
        ServingEngine engine = new ServingEngine(model.card(), codec, props, manager, new BackendStepRunner(backend.pluginId(),
                executor, device.isPresent() ? serving::deviceMemory : null,
                executor instanceof RemoteExecutor remote ? () -> remote.takeKvLoss() : Optional::empty), registry,
                executor::close, rank, sampling);
        new KvCacheMetrics(layout, manager.stats(), engine::kvUsage, rank.meterTags()).bindTo(registry);
        if (rank.index() > 0) {
            return engine;
        }
        serving.chose(new ServingBackend.Serving(backend.pluginId(), backend.provider().identity().name(), deviceName, rows),
                device.orElse(null));
        device.ifPresent(d -> DeviceMemoryMetrics.bindTo(registry, serving, d.device()));
        return engine;
    }

    private static void closeQuietly(ModelExecutor executor, String pluginId) {
        try {
            executor.close();
        } catch (RuntimeException e) {
            log.warn("Backend '{}' did not release the model cleanly: {}", pluginId, e.toString());
        }
    }
}
