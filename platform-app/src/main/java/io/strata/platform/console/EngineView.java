package io.strata.platform.console;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.KvCache;
import io.strata.platform.engine.LiveSequences;
import io.strata.platform.engine.ManagedKvCache;
import io.strata.platform.engine.ServingEngine;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PageTable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The console's read-only window on the engine and its KV cache manager. Everything here is read from
 * other threads than the engine's; the values are plain fields the engine updates, so a reading can lag a
 * step behind, never block the engine.
 *
 * <p>Without a {@link KvCacheManager} (an engine over another {@link KvCache}) the buckets collapse
 * into one pool from {@link ServingEngine#kvUsage()}; with an offline engine there are none.
 */
@Component
public class EngineView {
    private final ObjectProvider<InferenceEngine> engine;

    public EngineView(ObjectProvider<InferenceEngine> engine) {
        this.engine = engine;
    }

    public InferenceEngine engine() {
        return engine.getObject();
    }

    /** The hybrid KV cache manager behind the engine, when the engine runs on one. */
    public Optional<KvCacheManager> kvManager() {
        return serving().map(ServingEngine::kvCache)
                .filter(ManagedKvCache.class::isInstance)
                .map(k -> ((ManagedKvCache) k).manager());
    }

    Optional<ServingEngine> serving() {
        return engine() instanceof ServingEngine s ? Optional.of(s) : Optional.empty();
    }

    /** Queued and running choices, oldest first; empty when the engine is offline. */
    public List<LiveRequest> liveRequests() {
        Optional<ServingEngine> s = serving();
        if (s.isEmpty()) {
            return List.of();
        }
        KvLayout layout = kvManager().map(KvCacheManager::layout).orElse(null);
        List<LiveRequest> out = new ArrayList<>();
        for (LiveSequences.View v : s.get().liveSequences().snapshot()) {
            out.add(new LiveRequest(v.id(), v.phase(), v.promptTokens(), v.cachedTokens(), v.generatedTokens(),
                    v.computed(), v.preemptions(), v.ageNanos() / 1_000_000, pagesPerBucket(layout, v.kvState())));
        }
        return out;
    }

    /** Aborts a request by id; false when it is not in flight (already finished, or unknown). */
    public boolean abort(String requestId) {
        return serving().map(s -> s.liveSequences().abort(requestId)).orElse(false);
    }

    /** Pages a request holds per bucket (only pages it really holds; skipped window slots are -1). */
    static Map<String, Integer> pagesPerBucket(KvLayout layout, Object kvState) {
        Map<String, Integer> out = new LinkedHashMap<>();
        if (layout == null || !(kvState instanceof KvRequest r)) {
            return out;
        }
        for (BucketLayout b : layout.buckets()) {
            out.put(b.bucket().metricName(), 0);
        }
        try {
            for (KindGroup g : layout.groups()) {
                PageTable t = r.table(g.id());
                int held = 0;
                for (int i = 0, n = t.size(); i < n; i++) {
                    if (t.at(i) >= 0) {
                        held++;
                    }
                }
                out.merge(g.bucket().metricName(), held, Integer::sum);
            }
        } catch (RuntimeException raced) {
            // the engine resized a table while we read it; the next refresh will be exact
        }
        return out;
    }

    /**
     * A live request.
     *
     * @param pages pages held per bucket ({@code large}, {@code middle}, {@code small}); empty when unknown
     */
    public record LiveRequest(String id, String phase, int promptTokens, int cachedTokens, int generatedTokens,
                              int computedTokens, int preemptions, long ageMillis, Map<String, Integer> pages) {
    }

    List<LiveStats.Bucket> buckets() {
        Optional<KvCacheManager> m = kvManager();
        if (m.isPresent()) {
            KvLayout layout = m.get().layout();
            List<LiveStats.Bucket> out = new ArrayList<>();
            for (BucketLayout b : layout.buckets()) {
                KvCacheManager.BucketUsage u = m.get().usage(b.bucket());
                List<LiveStats.KindPages> kinds = new ArrayList<>();
                for (KindLayout k : layout.kinds()) {
                    if (k.bucket() == b.bucket()) {
                        kinds.add(new LiveStats.KindPages(k.kind().metricName(), k.layers().size(), k.groups().size(),
                                m.get().pagesInUse(k.kind())));
                    }
                }
                out.add(new LiveStats.Bucket(b.bucket().metricName(), b.rowBytes(), u.total(), u.used(), u.cached(),
                        u.free(), u.total() * b.rowBytes(), kinds));
            }
            return out;
        }
        return serving().map(s -> {
            KvCache.Usage u = s.kvUsage();
            return List.of(new LiveStats.Bucket("all", 0, u.totalPages(), u.usedPages(), u.cachedPages(), u.freePages(),
                    0, List.of()));
        }).orElse(List.of());
    }

    /** The manager's own prefix-cache counters (new requests only), when there is a manager. */
    Optional<KvCacheStats> prefixStats() {
        return kvManager().map(KvCacheManager::stats);
    }

    int running() {
        return serving().map(ServingEngine::runningCount).orElse(0);
    }

    int waiting() {
        return serving().map(ServingEngine::waitingCount).orElse(0);
    }

    int preemptedWaiting() {
        return (int) serving().map(s -> s.liveSequences().snapshot().stream()
                .filter(v -> v.phase().equals("preempted")).count()).orElse(0L).longValue();
    }
}
