package io.strata.platform.engine.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random admit / grow / prefix-hit / free / preempt / evict sequences against a simple model: the
 * expected reference count of every page is the number of live block-table entries naming it.
 */
class KvCacheManagerProperties {

    /** The bundled tiny model's schedule: window, C4A, C128A, C4A, C128A, C4A, MTP window. */
    static final KvLayout TINY = KvLayout.of(
            new KvModelShape("tiny", List.of(0, 4, 128, 4, 128, 4, 0), 512, 64, 128, 128), KvPrecision.DEFAULT);

    static final int[][] BASES = new int[3][];

    static {
        for (int b = 0; b < BASES.length; b++) {
            BASES[b] = new int[3000];
            for (int i = 0; i < BASES[b].length; i++) {
                BASES[b][i] = (i * 131 + b * 17) % 1000;
            }
        }
    }

    record Op(int kind, int a, int b) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.integers().between(0, 10),
                Arbitraries.integers().between(0, 1_000_000), Arbitraries.integers().between(0, 1_000_000)).as(Op::new);
        return op.list().ofMinSize(5).ofMaxSize(60);
    }

    @Provide
    Arbitrary<KvPoolSizes> pools() {
        return Combinators.combine(Arbitraries.integers().between(20, 80), Arbitraries.integers().between(30, 400),
                Arbitraries.integers().between(8, 40)).as(KvPoolSizes::new);
    }

    @Property(tries = 300)
    void accountingStaysExact(@ForAll("ops") List<Op> ops, @ForAll("pools") KvPoolSizes sizes) {
        KvCacheManager m = new KvCacheManager(TINY, sizes, true);
        List<KvRequest> running = new ArrayList<>();
        List<KvRequest> preempted = new ArrayList<>();
        int ids = 0;
        for (Op op : ops) {
            switch (op.kind()) {
                case 0, 1 -> {
                    int[] base = BASES[op.a() % BASES.length];
                    int len = 1 + op.b() % 1500;
                    int[] prompt = Arrays.copyOf(base, len);
                    if (op.a() % 4 == 0) {
                        prompt[len - 1] = 999;
                    }
                    KvRequest r = m.newRequest("r" + ids++, prompt, op.a() % 5 == 0 ? "salt" : null);
                    PrefixMatch hit = m.match(r);
                    assertThat(hit.computeFrom()).isLessThanOrEqualTo(hit.sharedPositions());
                    assertThat(hit.sharedPositions()).isLessThanOrEqualTo(len - 1).isNotNegative();
                    assertThat(hit.sharedPositions() % 256).isZero();
                    if (m.canAdmit(r, hit)) {
                        m.admit(r, hit);
                        running.add(r);
                    }
                }
                case 2, 3, 4 -> {
                    if (running.isEmpty()) {
                        break;
                    }
                    KvRequest r = running.get(op.a() % running.size());
                    // kind 4: short steps (a few positions), 2 and 3: up to a long chunk
                    int n = 1 + op.b() % (op.kind() == 4 ? 9 : 700);
                    long[] d = KvCacheManagerTest.demand(m, r, n);
                    boolean fits = KvCacheManagerTest.fits(m, d);
                    long[] usedBefore = new long[3];
                    for (PageBucket b : PageBucket.values()) {
                        usedBefore[b.ordinal()] = m.usage().bucket(b).used();
                    }
                    boolean ok = m.allocate(r, n);
                    assertThat(ok).isEqualTo(fits);
                    if (ok) {
                        // the planned demand is exactly what allocate took (boundary windows of long chunks included)
                        for (PageBucket b : PageBucket.values()) {
                            assertThat(m.usage().bucket(b).used() - usedBefore[b.ordinal()]).isEqualTo(d[b.ordinal()]);
                        }
                        if (op.b() % 3 != 0) {
                            // best effort: never changes whether the step fits, only uses what is left
                            m.cacheBoundaryWindows(r, n);
                            check(m, running);
                        }
                        m.commit(r, n);
                        while (r.tokenCount() < r.computed() + 1) {
                            r.appendToken((int) (r.computed() % 1000));
                        }
                    } else {
                        m.preempt(r);
                        running.remove(r);
                        preempted.add(r);
                    }
                }
                case 5 -> {
                    if (!running.isEmpty()) {
                        KvRequest r = running.remove(op.a() % running.size());
                        m.free(r);
                    }
                }
                case 6 -> {
                    if (!running.isEmpty()) {
                        KvRequest r = running.remove(op.a() % running.size());
                        m.preempt(r);
                        preempted.add(r);
                    }
                }
                case 7, 8 -> {
                    if (!preempted.isEmpty()) {
                        KvRequest r = preempted.get(op.a() % preempted.size());
                        PrefixMatch hit = m.match(r);
                        if (m.canAdmit(r, hit)) {
                            m.admit(r, hit);
                            preempted.remove(r);
                            running.add(r);
                        }
                    }
                }
                case 10 -> {
                    // a run of decode steps: page turnover through the request's spares
                    if (running.isEmpty()) {
                        break;
                    }
                    KvRequest r = running.get(op.a() % running.size());
                    for (int i = 0, steps = 1 + op.b() % 40; i < steps; i++) {
                        long[] d = KvCacheManagerTest.demand(m, r, 1);
                        long[] usedBefore = new long[3];
                        for (PageBucket b : PageBucket.values()) {
                            usedBefore[b.ordinal()] = m.usage().bucket(b).used();
                        }
                        if (!m.allocate(r, 1)) {
                            assertThat(KvCacheManagerTest.fits(m, d)).isFalse();
                            m.preempt(r);
                            running.remove(r);
                            preempted.add(r);
                            break;
                        }
                        for (PageBucket b : PageBucket.values()) {
                            assertThat(m.usage().bucket(b).used() - usedBefore[b.ordinal()]).isEqualTo(d[b.ordinal()]);
                        }
                        m.commit(r, 1);
                        while (r.tokenCount() < r.computed() + 1) {
                            r.appendToken((int) (r.computed() % 1000));
                        }
                    }
                }
                default -> {
                    // memory pressure from outside the request path: take and give back free pages
                    PageBucket b = PageBucket.values()[op.a() % 3];
                    PagePool pool = m.poolOf(b);
                    int take = Math.min(pool.free(), op.b() % 50);
                    int g = TINY.groups().stream().filter(x -> x.bucket() == b).findFirst().orElseThrow().id();
                    int[] pages = new int[take];
                    for (int i = 0; i < take; i++) {
                        pages[i] = pool.allocate(g);
                    }
                    for (int p : pages) {
                        pool.release(p);
                    }
                }
            }
            check(m, running);
        }
        for (KvRequest r : running) {
            m.free(r);
        }
        check(m, List.of());
        for (PageBucket b : PageBucket.values()) {
            assertThat(m.usage().bucket(b).used()).as("leak in " + b).isZero();
        }
        assertThat(m.liveRequests()).isZero();
    }

    static void check(KvCacheManager m, List<KvRequest> running) {
        Map<PageBucket, Map<Integer, Integer>> expected = new HashMap<>();
        Map<CacheKind, Set<Long>> perKind = new HashMap<>();
        for (KvRequest r : running) {
            for (KindGroup g : TINY.groups()) {
                KindLayout k = TINY.kindOf(g);
                PageTable t = r.table(g.id());
                Set<Integer> inTable = new HashSet<>();
                for (int i = 0; i < t.size(); i++) {
                    int p = t.at(i);
                    if (p < 0) {
                        continue;
                    }
                    assertThat(inTable.add(p)).as("page twice in one table").isTrue();
                    expected.computeIfAbsent(g.bucket(), x -> new HashMap<>()).merge(p, 1, Integer::sum);
                    assertThat(m.owner(g.bucket(), p)).as("page owned by one group only").isEqualTo(g.id());
                    perKind.computeIfAbsent(g.kind(), x -> new HashSet<>()).add(((long) g.bucket().ordinal() << 32) | p);
                    if (!k.kind().compressed()) {
                        long v = t.base() + i;
                        assertThat(k.endPosition(v)).as("window page held behind its window")
                                .isGreaterThan(k.window().windowStart(r.computed()));
                    }
                }
                if (k.kind().compressed()) {
                    assertThat((long) t.size() * 256).isGreaterThanOrEqualTo(r.computed());
                }
                // spare window pages: held outside the table, never more than the group's decode worst case
                int[] spares = m.spares(r, g.id());
                int heldInTable = (int) java.util.stream.IntStream.range(0, t.size()).filter(i -> t.at(i) >= 0).count();
                if (spares.length > 0) {
                    assertThat(heldInTable + spares.length).as("table + spares").isLessThanOrEqualTo(k.worstPages());
                }
                for (int p : spares) {
                    assertThat(inTable.add(p)).as("spare also in the table").isTrue();
                    expected.computeIfAbsent(g.bucket(), x -> new HashMap<>()).merge(p, 1, Integer::sum);
                    assertThat(m.poolOf(g.bucket()).exclusive(p)).as("a spare is the request's alone, named by no boundary window").isTrue();
                    assertThat(m.owner(g.bucket(), p)).isEqualTo(g.id());
                    perKind.computeIfAbsent(g.kind(), x -> new HashSet<>()).add(((long) g.bucket().ordinal() << 32) | p);
                }
            }
        }
        for (PageBucket b : PageBucket.values()) {
            KvUsage.BucketUsage u = m.usage().bucket(b);
            Map<Integer, Integer> exp = expected.getOrDefault(b, Map.of());
            for (int p = 0; p < u.total(); p++) {
                assertThat(m.refs(b, p)).as(b + " page " + p + " refcount").isEqualTo(exp.getOrDefault(p, 0));
            }
            assertThat(u.used()).isEqualTo(exp.size());
            assertThat(u.used() + u.cached() + u.free()).isEqualTo(u.total());
        }
        for (CacheKind kind : CacheKind.values()) {
            if (TINY.hasKind(kind)) {
                assertThat(m.usage().pagesInUse(kind)).as(kind + " in use").isEqualTo(perKind.getOrDefault(kind, Set.of()).size());
            }
        }
    }
}
