package io.strata.platform.engine;

import io.strata.kv.CacheKind;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.engine.kv.KvUsage;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link EngineSnapshot} for the whole server out of the ranks' own: counts, pages and prefix counters
 * summed, requests of every rank oldest first. The capacity is one rank's (every rank has the same pools), so
 * what it says can ever fit is what fits on a rank.
 */
final class RankSnapshots {

    private RankSnapshots() {
    }

    static EngineSnapshot merge(List<EngineSnapshot> ranks) {
        long steps = 0;
        int running = 0;
        int waiting = 0;
        List<EngineSnapshot.Request> requests = new ArrayList<>();
        List<KvUsage> usages = new ArrayList<>();
        List<KvCacheStats.Reading> prefixes = new ArrayList<>();
        for (EngineSnapshot s : ranks) {
            steps += s.steps();
            running += s.running();
            waiting += s.waiting();
            requests.addAll(s.requests());
            usages.add(s.kv());
            prefixes.add(s.prefix());
        }
        requests.sort(Comparator.comparingLong(EngineSnapshot.Request::arrivalNanos));
        return new EngineSnapshot(steps, running, waiting, ranks.getFirst().capacity(), usage(usages), prefix(prefixes),
                requests);
    }

    static KvUsage usage(List<KvUsage> ranks) {
        Map<io.strata.kv.PageBucket, long[]> buckets = new LinkedHashMap<>();
        Map<CacheKind, Long> inUse = new EnumMap<>(CacheKind.class);
        for (KvUsage u : ranks) {
            for (KvUsage.BucketUsage b : u.buckets()) {
                long[] sum = buckets.computeIfAbsent(b.bucket(), k -> new long[4]);
                sum[0] += b.total();
                sum[1] += b.used();
                sum[2] += b.cached();
                sum[3] += b.free();
            }
            u.pagesInUse().forEach((k, n) -> inUse.merge(k, n, Long::sum));
        }
        List<KvUsage.BucketUsage> out = new ArrayList<>();
        buckets.forEach((b, s) -> out.add(new KvUsage.BucketUsage(b, s[0], s[1], s[2], s[3])));
        return new KvUsage(out, inUse);
    }

    /** Counters summed; the recent hit rate weighted by the requests each rank's window holds. */
    static KvCacheStats.Reading prefix(List<KvCacheStats.Reading> ranks) {
        long queries = 0;
        long hits = 0;
        long recomputed = 0;
        long preemptions = 0;
        double weighted = 0;
        int window = 0;
        for (KvCacheStats.Reading r : ranks) {
            queries += r.queries();
            hits += r.hits();
            recomputed += r.recomputed();
            preemptions += r.preemptions();
            weighted += r.hitRateLastRequests() * r.requestsInWindow();
            window += r.requestsInWindow();
        }
        return new KvCacheStats.Reading(queries, hits, recomputed, preemptions, window == 0 ? 0 : weighted / window,
                window);
    }
}
