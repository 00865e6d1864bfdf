package io.strata.platform.engine.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.config.ReferenceModel;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KvCacheManagerTest {

    static final KvLayout FLASH = KvLayout.of(KvModelShape.of("flash", ReferenceModel.V4_FLASH.config()), KvPrecision.DEFAULT);

    static KvCacheManager manager(int large, int middle, int small) {
        return new KvCacheManager(FLASH, new KvPoolSizes(large, middle, small), true);
    }

    static KvCacheManager roomy() {
        return manager(400, 8000, 400);
    }

    static int[] tokens(int n, int seed) {
        return IntStream.range(0, n).map(i -> (i * 31 + seed * 7919) % 50_000).toArray();
    }

    static KvRequest run(KvCacheManager m, int[] prompt, int... chunks) {
        KvRequest r = m.newRequest("r" + Arrays.hashCode(prompt), prompt, null);
        PrefixMatch hit = m.match(r);
        assertThat(m.canAdmit(r, hit)).isTrue();
        m.admit(r, hit);
        for (int c : chunks) {
            assertThat(m.allocate(r, c)).isTrue();
            m.commit(r, c);
        }
        return r;
    }

    static int group(CacheKind kind) {
        return FLASH.kind(kind).groups().getFirst().id();
    }

    @Test
    void prompts255_256_257TakeOneOneAndTwoBlocks() {
        KvCacheManager m = roomy();
        for (int n : new int[] {255, 256, 257}) {
            KvRequest r = run(m, tokens(n, n), n);
            int expected = n <= 256 ? 1 : 2;
            for (CacheKind k : new CacheKind[] {CacheKind.C4A_KV, CacheKind.C128A_KV, CacheKind.C4_INDEXER_K}) {
                assertThat(r.table(group(k)).size()).as(k + " at " + n).isEqualTo(expected);
            }
            m.free(r);
        }
        // 255 published nothing; 256 and 257 each published their full first block (C128A is alone in SMALL)
        assertThat(m.usage().bucket(PageBucket.SMALL).cached()).isEqualTo(2);
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isZero();
    }

    @Test
    void hitsNeverCoverTheLastPromptToken() {
        KvCacheManager m = roomy();
        int[] p = tokens(256, 1);
        m.free(run(m, p, 256));
        KvRequest same = m.newRequest("same", p, null);
        assertThat(m.match(same)).isEqualTo(PrefixMatch.NONE);
        KvRequest longer = m.newRequest("longer", Arrays.copyOf(p, 257), null);
        assertThat(m.match(longer).sharedBlocks()).isEqualTo(1);
    }

    @Test
    void aHitEndsNoLaterThanTheFirstPositionWhoseLogitsAreNeeded() {
        KvCacheManager m = roomy();
        int[] p = tokens(1100, 11);
        // chunks ending on every boundary: the window before each is cached
        m.free(run(m, p, 256, 256, 256, 256, 76));
        assertThat(m.match(m.newRequest("all", p, null)).computeFrom()).isEqualTo(1024);
        assertThat(m.match(m.newRequest("all", p, null), 1100).computeFrom()).isEqualTo(1024);
        for (long needed : new long[] {0, 1, 255}) {
            assertThat(m.match(m.newRequest("none", p, null), needed)).as("needed from " + needed).isEqualTo(PrefixMatch.NONE);
        }
        for (long needed : new long[] {256, 700, 767}) {
            PrefixMatch hit = m.match(m.newRequest("some", p, null), needed);
            assertThat(hit.sharedPositions()).as("needed from " + needed).isEqualTo(needed / 256 * 256);
            assertThat(hit.computeFrom()).isEqualTo(needed / 256 * 256);
        }
    }

    @Test
    void aBoundedHitWhoseWindowWasEvictedStillSharesNoBlockPastTheBound() {
        KvCacheManager m = manager(400, 2000, 400);
        int[] a = tokens(8000, 12);
        KvRequest first = run(m, a, 7936, 64);
        PagePool middle = m.poolOf(PageBucket.MIDDLE);
        int releasedMidRequest = middle.cachedFree();
        m.free(first);
        // evict the windows released mid-request (every boundary's but the last), keeping the compressed blocks
        int uncached = middle.free() - middle.cachedFree();
        int dummyGroup = group(CacheKind.C4_INDEXER_STATE);
        int[] taken = IntStream.range(0, uncached + releasedMidRequest).map(i -> middle.allocate(dummyGroup)).toArray();
        for (int page : taken) {
            middle.release(page);
        }
        PrefixMatch hit = m.match(m.newRequest("bounded", a, null), 6000);
        assertThat(hit.windowHit()).isFalse();
        assertThat(hit.sharedPositions()).isEqualTo(5888);
        assertThat(hit.computeFrom()).isEqualTo(Math.max(0, 5888 - m.recomputeDepth()));
    }

    @Test
    void swaWindowPageIsReleasedExactlyWhenItFallsBehind128() {
        KvCacheManager m = roomy();
        KvRequest r = run(m, tokens(1000, 2));
        KindLayout swa = FLASH.kind(CacheKind.SWA_KV);
        int g = swa.groups().getFirst().id();
        long firstPageEnd = swa.endPosition(0);
        for (int c = 1; c <= 300; c++) {
            assertThat(m.allocate(r, 1)).isTrue();
            m.commit(r, 1);
            boolean held = pageOf(m, r, g, 0) >= 0;
            // position 0's page is needed while any of its positions is within the last 127 + current
            assertThat(held).as("computed=" + c).isEqualTo(c - 127 < firstPageEnd);
            // held pages are exactly those covering [c-127, c)
            long lo = Math.max(0, c - 127);
            assertThat(r.table(g).base()).isEqualTo(swa.pageIndex(lo));
        }
    }

    @Test
    void c128StateIsEmptyAtEvery128AndNeverStraddles256() {
        KvCacheManager m = roomy();
        KvRequest r = run(m, tokens(2000, 3), 250);
        KindLayout st = FLASH.kind(CacheKind.C128_STATE);
        int g = st.groups().getFirst().id();
        for (int c = 251; c <= 520; c++) {
            assertThat(m.allocate(r, 1)).isTrue();
            m.commit(r, 1);
            long held = 0;
            for (int i = 0; i < r.table(g).size(); i++) {
                if (r.table(g).at(i) >= 0) {
                    held++;
                }
            }
            long open = c % 128;
            // exactly the pages covering the open entry's positions [128*floor(c/128), c)
            long expected = open == 0 ? 0 : st.pageIndex(c - 1) - st.pageIndex(c - open) + 1;
            assertThat(held).as("computed=" + c).isEqualTo(expected);
        }
        assertThat(st.pageIndex(255)).isNotEqualTo(st.pageIndex(256));
        assertThat(st.window().size()).isEqualTo(128);
    }

    @Test
    void hitAtExactly256ResumesWithCachedWindow() {
        KvCacheManager m = roomy();
        int[] a = tokens(600, 4);
        m.free(run(m, a, 256, 344));
        int[] b = Arrays.copyOf(a, 400);
        for (int i = 256; i < 400; i++) {
            b[i] = 7;
        }
        KvRequest r = m.newRequest("b", b, null);
        PrefixMatch hit = m.match(r);
        assertThat(hit).isEqualTo(new PrefixMatch(1, 256, true));
        assertThat(m.canAdmit(r, hit)).isTrue();
        long usedBefore = m.usage().bucket(PageBucket.LARGE).used();
        m.admit(r, hit);
        assertThat(r.computed()).isEqualTo(256);
        assertThat(r.windowValidFrom()).isZero();
        assertThat(r.compressedWriteFrom()).isEqualTo(256);
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isGreaterThan(usedBefore);
        assertThat(m.stats().hits()).isEqualTo(256);
        assertThat(m.stats().queries()).isEqualTo(600 + 400);
        assertThat(m.allocate(r, 144)).isTrue();
        m.commit(r, 144);
        m.free(r);
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isZero();
    }

    @Test
    void droppingThePrefixCacheForgetsEveryHitAndFreesTheCachedPagesForReuse() {
        KvCacheManager m = roomy();
        int[] a = tokens(600, 4);
        KvRequest first = run(m, a, 256, 344);
        assertThatThrownBy(m::dropPrefixCache).as("a running request still holds pages")
                .isInstanceOf(IllegalStateException.class);
        m.free(first);
        assertThat(m.usage().bucket(PageBucket.LARGE).cached()).isPositive();

        assertThat(m.dropPrefixCache()).isPositive();
        for (PageBucket b : FLASH.buckets().stream().map(io.strata.kv.BucketLayout::bucket).toList()) {
            assertThat(m.usage().bucket(b).cached()).as(b + " cached").isZero();
            assertThat(m.usage().bucket(b).used()).as(b + " used").isZero();
        }
        KvRequest again = m.newRequest("again", a, null);
        PrefixMatch miss = m.match(again);
        assertThat(miss.computeFrom()).as("no hit on content computed before the drop").isZero();
        m.free(again);
        m.free(run(m, a, 256, 344));
        KvRequest third = m.newRequest("third", a, null);
        assertThat(m.match(third).computeFrom()).as("content computed after the drop is cached again").isPositive();
    }

    @Test
    void saltsAndModelsNeverShare() {
        KvCacheManager m = roomy();
        int[] a = tokens(600, 5);
        KvRequest first = m.newRequest("a", a, "tenant-1");
        m.admit(first, m.match(first));
        m.allocate(first, 600);
        m.commit(first, 600);
        m.free(first);
        assertThat(m.match(m.newRequest("b", a, "tenant-2")).sharedBlocks()).isZero();
        assertThat(m.match(m.newRequest("c", a, null)).sharedBlocks()).isZero();
        assertThat(m.match(m.newRequest("d", a, "tenant-1")).sharedBlocks()).isEqualTo(2);
        KvLayout other = KvLayout.of(KvModelShape.of("pro", ReferenceModel.V4_FLASH.config()), KvPrecision.DEFAULT);
        assertThat(BlockHash.seed("flash", null)).isNotEqualTo(BlockHash.seed(other.shape().modelId(), null));
    }

    @Test
    void evictedWindowIsRecomputedWithoutRewritingSharedCompressedPages() {
        KvCacheManager m = manager(400, 2000, 400);
        int[] a = tokens(8000, 6);
        KvRequest first = run(m, a, 7936, 64);
        int c4a = group(CacheKind.C4A_KV);
        int[] sharedPages = IntStream.range(0, 31).map(i -> first.table(c4a).at(i)).toArray();
        PagePool middle = m.poolOf(PageBucket.MIDDLE);
        // window pages released mid-request: the last windows before every boundary the long chunk crossed
        int releasedMidRequest = middle.cachedFree();
        assertThat(releasedMidRequest).isPositive();
        m.free(first);
        // window pages for the boundary 7936 were cached when released...
        int[] b = Arrays.copyOf(a, 8100);
        for (int i = 7936; i < 8100; i++) {
            b[i] = 3;
        }
        assertThat(m.match(m.newRequest("probe", b, null)).windowHit()).isTrue();
        // ...and, released mid-request, they sit at the LRU front: pressure on MIDDLE evicts them first
        int uncached = middle.free() - middle.cachedFree();
        int dummyGroup = group(CacheKind.C4_INDEXER_STATE);
        int[] taken = IntStream.range(0, uncached + releasedMidRequest).map(i -> middle.allocate(dummyGroup)).toArray();
        for (int p : taken) {
            middle.release(p);
        }
        KvRequest r = m.newRequest("b", b, null);
        PrefixMatch hit = m.match(r);
        assertThat(hit.sharedBlocks()).isEqualTo(31);
        assertThat(hit.windowHit()).isFalse();
        assertThat(hit.computeFrom()).isEqualTo(7936 - m.recomputeDepth());
        assertThat(m.canAdmit(r, hit)).isTrue();
        m.admit(r, hit);
        assertThat(r.computed()).isEqualTo(hit.computeFrom());
        assertThat(r.windowValidFrom()).isEqualTo(hit.computeFrom());
        assertThat(r.compressedWriteFrom()).isEqualTo(7936);
        long needLarge = demand(m, r, 8100 - (int) r.computed())[PageBucket.LARGE.ordinal()];
        assertThat(m.allocate(r, 8100 - (int) r.computed())).isTrue();
        // compressed pages before the boundary are the shared ones, untouched; one new block after it
        for (int i = 0; i < 31; i++) {
            assertThat(r.table(c4a).at(i)).isEqualTo(sharedPages[i]);
        }
        assertThat(r.table(c4a).size()).isEqualTo(32);
        assertThat(needLarge).isEqualTo(1 + finalWindowPages(PageBucket.LARGE, hit.computeFrom(), 8100));
        // the recompute crosses boundaries 2560 ... 7936: their windows are cached again, best effort
        assertThat(m.cacheBoundaryWindows(r, 8100 - (int) hit.computeFrom())).isEqualTo(22);
        m.commit(r, 8100 - (int) hit.computeFrom());
        assertThat(m.stats().recomputed()).isEqualTo(m.recomputeDepth());
        m.free(r);
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
    }

    /**
     * Window pages of one bucket that a chunk [from, end) maps with prefix caching on: the union of the pages
     * covering its final window and the last window before each 256-boundary in (from, min(end, tokens)].
     */
    static int chunkWindowPages(PageBucket bucket, long from, long end, long tokens) {
        int n = 0;
        for (KindLayout k : FLASH.kinds()) {
            if (k.kind().compressed() || k.bucket() != bucket) {
                continue;
            }
            java.util.TreeSet<Long> pages = new java.util.TreeSet<>();
            for (long t = (from / 256 + 1) * 256; t <= Math.min(end, tokens); t += 256) {
                for (long p = Math.max(from, k.window().windowStart(t)); p < t; p++) {
                    pages.add(k.pageIndex(p));
                }
            }
            for (long p = Math.max(from, k.window().windowStart(end)); p < end; p++) {
                pages.add(k.pageIndex(p));
            }
            n += k.groups().size() * pages.size();
        }
        return n;
    }

    /** Window pages of one bucket that a chunk [from, end) keeps: those covering its final window. */
    static int finalWindowPages(PageBucket bucket, long from, long end) {
        int n = 0;
        for (KindLayout k : FLASH.kinds()) {
            if (k.kind().compressed() || k.bucket() != bucket) {
                continue;
            }
            long lo = Math.max(from, k.window().windowStart(end));
            if (lo < end) {
                n += (int) (k.groups().size() * (k.pageIndex(end - 1) - k.pageIndex(lo) + 1));
            }
        }
        return n;
    }

    /** Worst-case window pages of one bucket per request. */
    static int worstWindowPages(PageBucket bucket) {
        int n = 0;
        for (KindLayout k : FLASH.kinds()) {
            if (!k.kind().compressed() && k.bucket() == bucket) {
                n += k.groups().size() * k.worstPages();
            }
        }
        return n;
    }

    @Test
    void decodeKeepsWindowTurnoverOffThePoolsWithinTheWorstCase() {
        for (boolean caching : new boolean[] {false, true}) {
            KvCacheManager m = new KvCacheManager(FLASH, new KvPoolSizes(400, 8000, 400), caching);
            KvRequest r = run(m, tokens(1000, 11), 1000);
            int c4a = group(CacheKind.C4A_KV);
            int sawSpares = 0;
            for (int step = 0; step < 600; step++) {
                int compressed = r.table(c4a).size();
                long[] d = demand(m, r, 1);
                long middleBefore = m.usage().bucket(PageBucket.MIDDLE).used();
                assertThat(m.allocate(r, 1)).isTrue();
                long middleAfter = m.usage().bucket(PageBucket.MIDDLE).used();
                assertThat(middleAfter - middleBefore).isEqualTo(d[PageBucket.MIDDLE.ordinal()]);
                r.appendToken(step);
                m.commit(r, 1);
                for (int g = 0; g < FLASH.groups().size(); g++) {
                    sawSpares += m.spares(r, g).length;
                }
                // whatever the turnover, a request never holds more than its compressed blocks plus the
                // window worst case (spares included), and once warm a step that adds no block takes no page
                for (PageBucket b : new PageBucket[] {PageBucket.LARGE, PageBucket.MIDDLE}) {
                    assertThat(m.usage().bucket(b).used()).as(b + " at step " + step + " caching=" + caching)
                            .isLessThanOrEqualTo(compressed + 1 + worstWindowPages(b));
                }
                if (step > 300 && r.table(c4a).size() == compressed && !caching) {
                    assertThat(d[PageBucket.MIDDLE.ordinal()] + d[PageBucket.LARGE.ordinal()]).as("pool pages at step " + step).isZero();
                }
            }
            assertThat(sawSpares).isPositive();
            m.free(r);
            for (PageBucket b : PageBucket.values()) {
                assertThat(m.usage().bucket(b).used()).isZero();
            }
        }
    }

    @Test
    void longPrefillChunkHoldsOnlyItsFinalWindowWithoutPrefixCaching() {
        KvCacheManager m = new KvCacheManager(FLASH, new KvPoolSizes(400, 8000, 400), false);
        KvRequest r = run(m, tokens(8192, 8));
        long[] d = demand(m, r, 8192);
        // 32 compressed blocks + the final windows only: no page per chunk token for SWA or states
        assertThat(d[PageBucket.MIDDLE.ordinal()]).isEqualTo(32 + finalWindowPages(PageBucket.MIDDLE, 0, 8192));
        assertThat(m.allocate(r, 8192)).isTrue();
        int swa = group(CacheKind.SWA_KV);
        assertThat(pageOf(m, r, swa, 4000)).isEqualTo(-1);
        assertThat(pageOf(m, r, swa, 4095)).isEqualTo(-1);
        assertThat(pageOf(m, r, swa, 8191)).isNotNegative();
        assertThat(pageOf(m, r, swa, 8192 - 128)).isNotNegative();
        m.commit(r, 8192);
        m.free(r);
    }

    @Test
    void boundaryWindowsUseOnlyPagesTheStepDoesNotNeed() {
        // MIDDLE sized exactly for the chunk (and the decode after it): no boundary window fits, nothing fails
        long[] peak = new KvCacheManager(FLASH, new KvPoolSizes(0, 0, 0), true).capacity().peakDemand(8192, 8192);
        int boundaryPages = chunkWindowPages(PageBucket.MIDDLE, 0, 8192, 8292) - finalWindowPages(PageBucket.MIDDLE, 0, 8192);
        assertThat(boundaryPages % 31).isZero();
        int perBoundary = boundaryPages / 31;
        assertThat(perBoundary).isEqualTo(40); // 2 SWA groups x 19 pages + 2 indexer-state pages
        KvCacheManager m = new KvCacheManager(FLASH, new KvPoolSizes(400, (int) peak[1], 400), true);
        int[] a = tokens(8192 + 100, 9);
        KvRequest r = run(m, a);
        assertThat(m.allocate(r, 8192)).isTrue();
        assertThat(m.usage().bucket(PageBucket.MIDDLE).free()).isLessThan(perBoundary);
        assertThat(m.cacheBoundaryWindows(r, 8192)).isZero();
        m.commit(r, 8192);
        // the blocks are cached, their windows were not: a sharer recomputes the window instead of resuming
        int[] b = Arrays.copyOf(a, 4096 + 50);
        PrefixMatch hit = m.match(m.newRequest("b", b, null));
        assertThat(hit.sharedBlocks()).isEqualTo(16);
        assertThat(hit.windowHit()).isFalse();
        m.free(r);
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isZero();
        // with a few boundaries' worth of room beyond the step's need, exactly that many are kept
        KvCacheManager some = new KvCacheManager(FLASH, new KvPoolSizes(400, (int) peak[1] + 3 * perBoundary, 400), true);
        KvRequest q = run(some, tokens(8192 + 100, 10));
        assertThat(some.allocate(q, 8192)).isTrue();
        assertThat(some.cacheBoundaryWindows(q, 8192)).isEqualTo(3);
        some.commit(q, 8192);
        some.free(q);
        assertThat(some.usage().bucket(PageBucket.MIDDLE).used()).isZero();
    }

    @Test
    void longPrefillChunkMapsTheLastWindowBeforeEveryBoundaryAndCachesIt() {
        KvCacheManager m = roomy();
        int[] a = tokens(8192 + 100, 8);
        KvRequest r = run(m, a);
        long[] d = demand(m, r, 8192);
        // what the step needs: its blocks and final window only (boundary windows are best effort)
        assertThat(d[PageBucket.MIDDLE.ordinal()]).isEqualTo(32 + finalWindowPages(PageBucket.MIDDLE, 0, 8192));
        assertThat(d[PageBucket.LARGE.ordinal()]).isEqualTo(32 + finalWindowPages(PageBucket.LARGE, 0, 8192));
        long before = m.usage().bucket(PageBucket.MIDDLE).used();
        long beforeLarge = m.usage().bucket(PageBucket.LARGE).used();
        assertThat(m.allocate(r, 8192)).isTrue();
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used() - before).isEqualTo(d[PageBucket.MIDDLE.ordinal()]);
        int swa = group(CacheKind.SWA_KV);
        assertThat(pageOf(m, r, swa, 4095)).isEqualTo(-1);
        // with room to spare, the windows before boundaries 256 ... 7936 are mapped too (8192's is the final one)
        assertThat(m.cacheBoundaryWindows(r, 8192)).isEqualTo(31);
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used() - before).isEqualTo(32 + chunkWindowPages(PageBucket.MIDDLE, 0, 8192, a.length));
        assertThat(m.usage().bucket(PageBucket.LARGE).used() - beforeLarge).isEqualTo(32 + chunkWindowPages(PageBucket.LARGE, 0, 8192, a.length));
        assertThat(pageOf(m, r, swa, 3900)).isEqualTo(-1);
        assertThat(pageOf(m, r, swa, 4095)).isNotNegative();     // last window before 4096
        assertThat(pageOf(m, r, swa, 4096 - 127)).isNotNegative();
        assertThat(pageOf(m, r, swa, 4096 + 10)).isEqualTo(-1);
        m.commit(r, 8192);
        // the boundary windows fell behind the window at commit: released into the cached LRU, not held
        assertThat(pageOf(m, r, swa, 4095)).isEqualTo(-1);
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isEqualTo(before + 32 + finalWindowPages(PageBucket.MIDDLE, 0, 8192));
        assertThat(m.usage().bucket(PageBucket.MIDDLE).cached()).isPositive();
        // a request sharing any prefix of whole blocks resumes exactly at its last boundary, while r still runs
        for (int shared : new int[] {256, 1536, 4096, 7936}) {
            int[] b = Arrays.copyOf(a, shared + 50);
            Arrays.fill(b, shared, b.length, 7);
            KvRequest other = m.newRequest("o" + shared, b, null);
            PrefixMatch hit = m.match(other);
            assertThat(hit.windowHit()).as("hit at " + shared).isTrue();
            assertThat(hit.computeFrom()).isEqualTo(shared);
        }
        m.free(r);
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isZero();
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
        // the final window is published when the request frees it
        assertThat(m.match(m.newRequest("all", Arrays.copyOf(a, 8193), null)).computeFrom()).isEqualTo(8192);
    }

    @Test
    void peakDemandIsExactForChunkedPrefill() {
        for (boolean caching : new boolean[] {false, true}) {
            for (int chunk : new int[] {1, 100, 128, 210, 612, 2048}) {
                for (int len : new int[] {255, 257, 1000, 3000}) {
                    KvCacheManager m = new KvCacheManager(FLASH, new KvPoolSizes(4000, 80000, 4000), caching);
                    long[] want = m.capacity().peakDemand(len, chunk);
                    long[] seen = new long[3];
                    KvRequest r = m.newRequest("p", tokens(len, len + chunk), null);
                    m.admit(r, PrefixMatch.NONE);
                    for (int c = 0; c < len; c += Math.min(chunk, len - c)) {
                        assertThat(m.allocate(r, Math.min(chunk, len - c))).isTrue();
                        for (PageBucket b : PageBucket.values()) {
                            seen[b.ordinal()] = Math.max(seen[b.ordinal()], m.usage().bucket(b).used());
                        }
                        m.commit(r, Math.min(chunk, len - c));
                    }
                    long[] decode = KvPoolSizes.demand(FLASH, len);
                    for (PageBucket b : PageBucket.values()) {
                        int i = b.ordinal();
                        assertThat(want[i]).as(b + " caching=" + caching + " chunk=" + chunk + " len=" + len)
                                .isEqualTo(Math.max(seen[i], decode[i]));
                    }
                    m.free(r);
                    // and pools of exactly that size serve the chunked prefill alone
                    KvCacheManager exact = new KvCacheManager(FLASH, new KvPoolSizes((int) want[0], (int) want[1], (int) want[2]), caching);
                    assertThat(exact.capacity().canEverFit(len, chunk)).isTrue();
                    KvRequest q = exact.newRequest("q", tokens(len, 1), null);
                    exact.admit(q, PrefixMatch.NONE);
                    for (int c = 0; c < len; c += Math.min(chunk, len - c)) {
                        assertThat(exact.allocate(q, Math.min(chunk, len - c))).isTrue();
                        exact.commit(q, Math.min(chunk, len - c));
                    }
                    exact.free(q);
                }
            }
        }
        // a 210-token chunk needs more MIDDLE pages than the decode-only estimate (the previous window is still held)
        KvCacheManager m = roomy();
        assertThat(m.capacity().peakDemand(3000, 210)[PageBucket.MIDDLE.ordinal()])
                .isGreaterThan(KvPoolSizes.demand(FLASH, 3000)[PageBucket.MIDDLE.ordinal()]);
    }

    @Test
    void allocationIsAllOrNothingAndPreemptKeepsHashes() {
        KvCacheManager m = manager(3 + worstWindowPages(PageBucket.LARGE), 300, 3);
        KvRequest r = m.newRequest("r", tokens(2000, 9), null);
        assertThat(m.canAdmit(r, PrefixMatch.NONE)).isFalse();
        m.admit(r, PrefixMatch.NONE);
        assertThat(m.allocate(r, 2000)).isFalse();
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
        assertThat(m.usage().bucket(PageBucket.MIDDLE).used()).isZero();
        assertThat(m.allocate(r, 600)).isTrue();
        m.commit(r, 600);
        m.preempt(r);
        assertThat(r.computed()).isZero();
        assertThat(m.stats().preemptions()).isEqualTo(1);
        assertThat(m.usage().bucket(PageBucket.LARGE).used()).isZero();
        PrefixMatch again = m.match(r);
        assertThat(again.sharedBlocks()).isEqualTo(2);
        m.admit(r, again);
        assertThat(m.stats().preemptedHits()).isEqualTo(again.computeFrom());
        m.free(r);
        assertThatThrownBy(() -> m.allocate(r, 1)).hasMessageContaining("not running");
    }

    @Test
    void canEverFitAndAdmissionCheckCountWholePrompt() {
        // LARGE holds C4A blocks plus the worst case of the window kinds placed there (the main states)
        int stateWorst = worstWindowPages(PageBucket.LARGE);
        assertThat(stateWorst).isEqualTo(2 * 7 + 2);
        KvCacheManager m = manager(10 + stateWorst, 2000, 10);
        assertThat(m.capacity().canEverFit(2560)).isTrue();
        assertThat(m.capacity().canEverFit(2561)).isFalse();
        KvRequest r = m.newRequest("big", tokens(3000, 10), null);
        assertThat(m.canAdmit(r, m.match(r))).isFalse();
        KvRequest ok = m.newRequest("ok", tokens(2000, 10), null);
        assertThat(m.canAdmit(ok, m.match(ok))).isTrue();
    }

    @Test
    void groupsOfOneKindShareNoPage() {
        KvCacheManager m = roomy();
        KvRequest r = run(m, tokens(3000, 11), 1000, 1000, 1000);
        for (KindGroup g : FLASH.groups()) {
            for (int i = 0; i < r.table(g.id()).size(); i++) {
                int p = r.table(g.id()).at(i);
                if (p >= 0) {
                    assertThat(m.owner(g.bucket(), p)).isEqualTo(g.id());
                }
            }
        }
        m.free(r);
    }

    /** The pool pages a step of {@code n} positions takes per bucket (the manager's own demand computation). */
    static long[] demand(KvCacheManager m, KvRequest r, int n) {
        long[] d = new long[PageBucket.values().length];
        m.stepDemand(r, n, d);
        return d;
    }

    /** Whether {@code d} fits the free pages (cached ones count as free), read from the usage figures. */
    static boolean fits(KvCacheManager m, long[] d) {
        for (PageBucket b : PageBucket.values()) {
            KvUsage.BucketUsage u = m.usage().bucket(b);
            if (d[b.ordinal()] > u.free() + u.cached()) {
                return false;
            }
        }
        return true;
    }

    /** The physical page holding {@code position} for a group, -1 when not held. */
    static int pageOf(KvCacheManager m, KvRequest r, int group, long position) {
        return r.table(group).page(m.layout().kindOf(m.layout().groups().get(group)).pageIndex(position));
    }
}
