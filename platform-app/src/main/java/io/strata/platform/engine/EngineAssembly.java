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
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Map;

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

    static ServingEngine start(EngineConfiguration.ServedModel model, TokenizerCodec codec, LoadedBackend backend,
                               EngineProperties props, KvProperties kvProps, MeterRegistry registry) {
        ExecutionBackend exec = (ExecutionBackend) backend.provider();
        ModelExecutor executor = exec.load(model.config(), model.checkpoint(), new LoadOptions(model.card().id(),
                props.maxNumBatchedTokens(), props.maxNumSeqs(), 0));
        KvLayout layout = KvLayout.of(KvModelShape.of(model.card().id(), model.config()), KvPrecision.parse(kvProps.dtype()));
        BackendCapabilities caps = executor.capabilities();
        long target = Math.max(kvProps.targetContext(), model.card().maxModelLen());
        long budget = kvBudget(layout, caps.kvMemoryBytes(), kvProps.memoryBytes(), target, props.maxNumSeqs());
        KvPoolSizes sizes = KvPoolSizes.forBudget(layout, budget, target);
        Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);
        for (PageBucket b : PageBucket.values()) {
            if (layout.hasBucket(b)) {
                pages.put(b, sizes.pages(b));
            }
        }
        executor.allocateKv(layout, pages);
        KvCacheManager manager = new KvCacheManager(layout, sizes, kvProps.prefixCaching());
        log.info("Serving {} on backend '{}': weights {} MiB, KV pools {} (budget {} MiB)", model.card().id(),
                backend.pluginId(), executor.weightBytes() >> 20, pages, budget >> 20);
        ServingEngine engine = new ServingEngine(model.card(), codec, props, manager, new BackendStepRunner(executor),
                registry, executor::close);
        new KvCacheMetrics(layout, manager.stats(), engine::kvUsage).bindTo(registry);
        return engine;
    }
}
