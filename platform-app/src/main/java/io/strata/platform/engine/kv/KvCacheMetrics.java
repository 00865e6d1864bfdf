package io.strata.platform.engine.kv;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.strata.kv.BucketLayout;
import io.strata.kv.KindLayout;

import io.strata.kv.KvLayout;

import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Publishes the KV cache to Micrometer (and so to {@code /actuator/prometheus}). Names, with
 * their Prometheus form and the closest vLLM metric:
 * <ul>
 *   <li>{@code strata.kv.pages{bucket,state=total|used|cached|free}} → {@code strata_kv_pages}; vLLM has only
 *       the aggregate {@code vllm:kv_cache_usage_perc}</li>
 *   <li>{@code strata.kv.usage{bucket}} = used/total → {@code strata_kv_usage}; ≈ {@code vllm:kv_cache_usage_perc}
 *       (cached pages count as free in both)</li>
 *   <li>{@code strata.kv.kind.pages.in.use{kind}} → {@code strata_kv_kind_pages_in_use}; no vLLM equivalent</li>
 *   <li>{@code strata.kv.prefix.queries} (tokens) → {@code strata_kv_prefix_queries_total}; =
 *       {@code vllm:prefix_cache_queries_total}</li>
 *   <li>{@code strata.kv.prefix.hits} (tokens) → {@code strata_kv_prefix_hits_total}; =
 *       {@code vllm:prefix_cache_hits_total}</li>
 *   <li>{@code strata.kv.prefix.recomputed} (tokens) → {@code strata_kv_prefix_recomputed_total}; no vLLM
 *       equivalent (vLLM shrinks the hit instead)</li>
 *   <li>{@code strata.kv.prefix.hit.rate} → {@code strata_kv_prefix_hit_rate}; the "Prefix cache hit rate"
 *       of vLLM's log line (last 1,000 requests)</li>
 *   <li>{@code strata.kv.preemptions} → {@code strata_kv_preemptions_total}; = {@code vllm:num_preemptions_total}</li>
 * </ul>
 * Page gauges read the latest {@link KvUsage} the engine thread published (at most a step old, never half a
 * step); the counters are {@link KvCacheStats}, which is safe from any thread. The gauges hold the supplier
 * strongly: Micrometer keeps only a weak reference to a gauge's state by default, and nothing else holds
 * the supplier, so after a garbage collection the pages would read NaN.
 */
public final class KvCacheMetrics implements MeterBinder {

    private final KvLayout layout;
    private final KvCacheStats stats;
    private final Supplier<KvUsage> usage;
    private final Tags extra;

    /**
     * @param usage the latest published page accounting (any thread)
     */
    public KvCacheMetrics(KvLayout layout, KvCacheStats stats, Supplier<KvUsage> usage) {
        this(layout, stats, usage, Tags.empty());
    }

    /**
     * @param extra tags added to every meter ({@code rank} for a data-parallel rank's manager)
     */
    public KvCacheMetrics(KvLayout layout, KvCacheStats stats, Supplier<KvUsage> usage, Tags extra) {
        this.layout = layout;
        this.stats = stats;
        this.usage = usage;
        this.extra = extra;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        String model = layout.shape().modelId();
        for (BucketLayout b : layout.buckets()) {
            String bucket = b.bucket().metricName();
            page(registry, model, bucket, "total", u -> u.bucket(b.bucket()).total());
            page(registry, model, bucket, "used", u -> u.bucket(b.bucket()).used());
            page(registry, model, bucket, "cached", u -> u.bucket(b.bucket()).cached());
            page(registry, model, bucket, "free", u -> u.bucket(b.bucket()).free());
            Gauge.builder("strata.kv.usage", usage, s -> {
                        KvUsage.BucketUsage u = s.get().bucket(b.bucket());
                        return u.total() == 0 ? 0 : (double) u.used() / u.total();
                    })
                    .tags("model", model, "bucket", bucket).tags(extra)
                    .description("Fraction of the bucket's pages referenced by running requests (cached pages count as free)")
                    .strongReference(true).register(registry);
            Gauge.builder("strata.kv.page.bytes", b, BucketLayout::rowBytes)
                    .tags("model", model, "bucket", bucket).tags(extra).baseUnit("bytes")
                    .description("Bytes of one page (row) of the bucket").register(registry);
        }
        for (KindLayout k : layout.kinds()) {
            Gauge.builder("strata.kv.kind.pages.in.use", usage, s -> s.get().pagesInUse(k.kind()))
                    .tags("model", model, "kind", k.kind().metricName(), "bucket", k.bucket().metricName()).tags(extra)
                    .description("Pages of this cache kind referenced by running requests").strongReference(true)
                    .register(registry);
        }
        KvCacheStats s = stats;
        FunctionCounter.builder("strata.kv.prefix.queries", s, KvCacheStats::queries).tags("model", model).tags(extra)
                .baseUnit("tokens").description("Prompt tokens of new requests looked up in the prefix cache").register(registry);
        FunctionCounter.builder("strata.kv.prefix.hits", s, KvCacheStats::hits).tags("model", model).tags(extra)
                .baseUnit("tokens").description("Prompt tokens served from the prefix cache").register(registry);
        FunctionCounter.builder("strata.kv.prefix.recomputed", s, KvCacheStats::recomputed).tags("model", model).tags(extra)
                .baseUnit("tokens").description("Tokens recomputed to rebuild an evicted window on a prefix hit").register(registry);
        FunctionCounter.builder("strata.kv.preemptions", s, KvCacheStats::preemptions).tags("model", model).tags(extra)
                .description("Requests preempted (all pages released, resumed later)").register(registry);
        Gauge.builder("strata.kv.prefix.hit.rate", s, KvCacheStats::hitRateLastRequests).tags("model", model).tags(extra)
                .description("Prefix-cache hits / queries over the last 1,000 new requests").register(registry);
    }

    private void page(MeterRegistry registry, String model, String bucket, String state, ToDoubleFunction<KvUsage> f) {
        Gauge.builder("strata.kv.pages", usage, s -> f.applyAsDouble(s.get()))
                .tags("model", model, "bucket", bucket, "state", state).tags(extra)
                .description("Pages of a bucket pool by state").strongReference(true).register(registry);
    }
}
