package io.strata.platform.engine;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.engine.kv.KvCapacity;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PageTable;
import io.strata.platform.engine.kv.KvUsage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the engine looked like after a step, immutable: the engine thread builds one after every step (and
 * while idle) and publishes it through a volatile field, so the console and metrics read engine state from
 * any thread without touching it. The request list is rebuilt at most every {@link #REQUESTS_EVERY_NANOS}
 * (counting pages walks every table), the counts every time.
 *
 * @param steps     steps completed
 * @param running   sequences holding pages
 * @param waiting   sequences queued (new or preempted)
 * @param capacity  pool sizes and layout (fixed for the engine's life)
 * @param kv        page accounting
 * @param prefix    prefix-cache and preemption counters
 * @param requests  choices queued or running, oldest first
 */
public record EngineSnapshot(long steps, int running, int waiting, KvCapacity capacity, KvUsage kv,
                             KvCacheStats.Reading prefix, List<Request> requests) {

    static final long REQUESTS_EVERY_NANOS = 50_000_000L;

    public EngineSnapshot {
        requests = List.copyOf(requests);
    }

    /** Queued sequences that were preempted and wait to be recomputed. */
    public int preemptedWaiting() {
        return (int) requests.stream().filter(r -> r.phase().equals("preempted")).count();
    }

    /** Views of the engine's sequences, oldest first (engine thread: reads their page tables). */
    static List<Request> requestsOf(Iterable<Sequence> sequences, KvLayout layout) {
        List<Sequence> all = new ArrayList<>();
        sequences.forEach(all::add);
        all.sort(Comparator.comparingLong(s -> s.seqNo));
        List<Request> out = new ArrayList<>(all.size());
        for (Sequence s : all) {
            KvRequest r = s.kv();
            String phase = switch (r.state()) {
                case WAITING -> "waiting";
                case PREEMPTED -> "preempted";
                case RUNNING -> r.computed() < s.promptLength() ? "prefill" : "decode";
                case FINISHED -> "finishing";
            };
            Map<String, Integer> pages = new LinkedHashMap<>();
            for (BucketLayout b : layout.buckets()) {
                pages.put(b.bucket().metricName(), 0);
            }
            for (KindGroup g : layout.groups()) {
                PageTable t = r.table(g.id());
                int held = 0;
                for (int i = 0, n = t.size(); i < n; i++) {
                    if (t.at(i) >= 0) {
                        held++;
                    }
                }
                pages.merge(g.bucket().metricName(), held, Integer::sum);
            }
            out.add(new Request(s.id, phase, s.promptLength(), Math.max(0, s.cachedTokens), Math.max(0, s.outputLength()),
                    s.numComputed(), r.preemptions(), s.arrivalNanos, pages));
        }
        return out;
    }

    /**
     * One choice in flight.
     *
     * @param phase        {@code waiting}, {@code preempted} (waiting to be recomputed), {@code prefill},
     *                     {@code decode} or {@code finishing}
     * @param computed     positions whose KV is written
     * @param arrivalNanos {@link System#nanoTime()} at submit
     * @param pages        pages held per bucket ({@code large}, {@code middle}, {@code small}); skipped
     *                     window slots are not pages
     */
    public record Request(String id, String phase, int promptTokens, int cachedTokens, int generatedTokens,
                          int computed, int preemptions, long arrivalNanos, Map<String, Integer> pages) {
        public Request {
            pages = Collections.unmodifiableMap(new LinkedHashMap<>(pages));
        }
    }
}
