package io.strata.platform.engine.kv;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

class KvCacheMetricsTest {

    @Test
    void publishesBucketsKindsAndPrefixCounters() {
        KvCacheManager m = KvCacheManagerTest.roomy();
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        new KvCacheMetrics(m.layout(), m.stats(), m::usage).bindTo(reg); // the engine passes its published snapshot
        int[] a = KvCacheManagerTest.tokens(600, 1);
        m.free(KvCacheManagerTest.run(m, a, 256, 344));
        KvRequest b = m.newRequest("b", Arrays.copyOf(a, 300), null);
        m.admit(b, m.match(b));
        // SMALL holds only C128A main KV: the shared first block is used, the second block of A stays cached
        assertThat(reg.get("strata.kv.pages").tags("bucket", "small", "state", "total").gauge().value()).isEqualTo(400);
        assertThat(reg.get("strata.kv.pages").tags("bucket", "small", "state", "used").gauge().value()).isEqualTo(1);
        assertThat(reg.get("strata.kv.pages").tags("bucket", "small", "state", "cached").gauge().value()).isEqualTo(1);
        assertThat(reg.get("strata.kv.pages").tags("bucket", "small", "state", "free").gauge().value()).isEqualTo(398);
        assertThat(reg.get("strata.kv.kind.pages.in.use").tags("kind", "c4a_kv").gauge().value()).isEqualTo(1);
        assertThat(reg.get("strata.kv.prefix.queries").functionCounter().count()).isEqualTo(900);
        assertThat(reg.get("strata.kv.prefix.hits").functionCounter().count()).isEqualTo(256);
        assertThat(reg.get("strata.kv.prefix.hit.rate").gauge().value()).isEqualTo(256.0 / 900);
        m.preempt(b);
        assertThat(reg.get("strata.kv.preemptions").functionCounter().count()).isEqualTo(1);
        assertThat(reg.get("strata.kv.usage").tags("bucket", "small").gauge().value()).isZero();
        assertThat(reg.get("strata.kv.usage").tags("bucket", "large").gauge().value()).isZero();
    }

    /**
     * Micrometer holds a gauge's state weakly unless told otherwise; the engine passes a method reference that
     * nothing else holds, so the page gauges must survive a garbage collection (a load test's leak check reads
     * them after the drain).
     */
    @Test
    void pageGaugesSurviveAGarbageCollection() throws Exception {
        KvCacheManager m = KvCacheManagerTest.roomy();
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        new KvCacheMetrics(m.layout(), m.stats(), m::usage).bindTo(reg);
        java.lang.ref.WeakReference<Object> probe = new java.lang.ref.WeakReference<>(new Object());
        for (int i = 0; i < 20 && probe.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(probe.get()).as("a collection ran").isNull();
        assertThat(reg.get("strata.kv.pages").tags("bucket", "small", "state", "total").gauge().value()).isEqualTo(400);
        assertThat(reg.get("strata.kv.usage").tags("bucket", "small").gauge().value()).isZero();
        assertThat(reg.get("strata.kv.kind.pages.in.use").tags("kind", "c4a_kv").gauge().value()).isZero();
    }
}
