package io.strata.platform.console;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.platform.engine.EngineSnapshot;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.engine.kv.KvCapacity;
import io.strata.platform.engine.kv.KvUsage;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The console's read-only window on the engine: everything comes from the latest {@link EngineSnapshot} the
 * engine thread published (immutable, at most a step old), so nothing here reads engine state across threads
 * or can race with a step. With an engine that publishes none (no model loaded) there is nothing to show.
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

    Optional<EngineSnapshot> snapshot() {
        return engine().snapshot();
    }

    /** Pool sizes and layout of the engine's KV cache, when it has one. */
    public Optional<KvCapacity> kvCapacity() {
        return snapshot().map(EngineSnapshot::capacity);
    }

    /** Queued and running choices, oldest first; empty when the engine is offline. */
    public List<LiveRequest> liveRequests() {
        Optional<EngineSnapshot> s = snapshot();
        if (s.isEmpty()) {
            return List.of();
        }
        long now = System.nanoTime();
        List<LiveRequest> out = new ArrayList<>();
        for (EngineSnapshot.Request r : s.get().requests()) {
            out.add(new LiveRequest(r.id(), r.phase(), r.promptTokens(), r.cachedTokens(), r.generatedTokens(),
                    r.computed(), r.preemptions(), (now - r.arrivalNanos()) / 1_000_000, r.pages()));
        }
        return out;
    }

    /** Aborts a request by id; false when it is not in flight (already finished, or unknown). */
    public boolean abort(String requestId) {
        return engine().abort(requestId);
    }

    /**
     * A live request.
     *
     * @param pages pages held per bucket ({@code large}, {@code middle}, {@code small})
     */
    public record LiveRequest(String id, String phase, int promptTokens, int cachedTokens, int generatedTokens,
                              int computedTokens, int preemptions, long ageMillis, Map<String, Integer> pages) {
    }

    List<LiveStats.Bucket> buckets() {
        Optional<EngineSnapshot> s = snapshot();
        if (s.isEmpty()) {
            return List.of();
        }
        KvLayout layout = s.get().capacity().layout();
        KvUsage usage = s.get().kv();
        List<LiveStats.Bucket> out = new ArrayList<>();
        for (BucketLayout b : layout.buckets()) {
            KvUsage.BucketUsage u = usage.bucket(b.bucket());
            List<LiveStats.KindPages> kinds = new ArrayList<>();
            for (KindLayout k : layout.kinds()) {
                if (k.bucket() == b.bucket()) {
                    kinds.add(new LiveStats.KindPages(k.kind().metricName(), k.layers().size(), k.groups().size(),
                            usage.pagesInUse(k.kind())));
                }
            }
            out.add(new LiveStats.Bucket(b.bucket().metricName(), b.rowBytes(), u.total(), u.used(), u.cached(),
                    u.free(), u.total() * b.rowBytes(), kinds));
        }
        return out;
    }

    /** The KV manager's own prefix-cache counters (new requests only), when the engine has a KV cache. */
    Optional<KvCacheStats.Reading> prefixStats() {
        return snapshot().map(EngineSnapshot::prefix);
    }

    int running() {
        return snapshot().map(EngineSnapshot::running).orElse(0);
    }

    int waiting() {
        return snapshot().map(EngineSnapshot::waiting).orElse(0);
    }

    int preemptedWaiting() {
        return snapshot().map(EngineSnapshot::preemptedWaiting).orElse(0);
    }
}
