package io.strata.platform.engine.kv;

import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.Arrays;
import java.util.List;

/**
 * The hybrid KV cache manager: decides which page of which bucket pool holds what, for every request and
 * every kind group. Backends own the bytes (see {@link KvLayout} for addresses).
 *
 * <p>Everything is in native token positions; no caller needs to know compress ratios or page sizes.
 * A request goes through:
 * <ol>
 *   <li>{@link #newRequest} with its prompt; {@link #match} looks the prompt up in the prefix cache;
 *       {@link #canAdmit} checks the whole remaining prompt fits now; {@link #admit} pins the hit and sets
 *       {@link KvRequest#computed()} to {@link PrefixMatch#computeFrom()}.</li>
 *   <li>Each step: {@link #pagesNeeded}/{@link #addDemand}+{@link #fits} to plan, {@link #allocate} for the
 *       positions {@code [computed, computed+n)} the step will write (all or nothing), then after the step
 *       {@link #commit} the positions actually computed. Sampled tokens go in with {@link #appendToken}.</li>
 *   <li>{@link #free} when finished or aborted; {@link #preempt} to give everything back and later
 *       re-{@link #match}/{@link #admit} the same request (its hashes are kept, its pages stay cached).</li>
 * </ol>
 *
 * <p>Window kinds (SWA KV, compressor states) only get pages for the window that survives a step: inside a
 * long prefill chunk the positions that fall behind the window before the chunk ends get no page at all
 * (their slot is -1), so a chunk costs no transient pages beyond its final window. Pages wholly behind
 * the window are released at {@link #commit}.
 *
 * <p>Not thread-safe: call from the engine thread only. The per-step methods allocate nothing except when
 * a page is published to the prefix cache (once per block per group).
 */
public final class KvCacheManager {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final KvLayout layout;
    private final String modelId;
    private final boolean prefixCaching;
    private final PagePool[] pools = new PagePool[PageBucket.values().length];
    private final KindGroup[] groups;
    private final KindLayout[] kindOf;
    private final int[] bucketOf;
    private final int[] compressedGroups;
    private final int[] windowGroups;
    private final BoundaryWindows boundaryWindows;
    private final WindowPages windowPages;
    private final long recomputeDepth;
    private final KvCacheStats stats = new KvCacheStats();
    private final int[] scratch = new int[PageBucket.values().length];
    private final int[] groupScratch;
    private final BlockHasher hasher = new BlockHasher();
    private int live;

    /**
     * @param layout        the page layout
     * @param sizes         pages per pool
     * @param prefixCaching whether prompts are looked up in and published to the prefix cache
     */
    public KvCacheManager(KvLayout layout, KvPoolSizes sizes, boolean prefixCaching) {
        this.layout = layout;
        this.modelId = layout.shape().modelId();
        this.prefixCaching = prefixCaching;
        List<KindGroup> gs = layout.groups();
        this.groups = gs.toArray(KindGroup[]::new);
        this.kindOf = new KindLayout[groups.length];
        this.bucketOf = new int[groups.length];
        this.groupScratch = new int[groups.length];
        int nc = 0;
        for (int g = 0; g < groups.length; g++) {
            kindOf[g] = layout.kindOf(groups[g]);
            bucketOf[g] = groups[g].bucket().ordinal();
            if (groups[g].kind().compressed()) {
                nc++;
            }
        }
        compressedGroups = new int[nc];
        windowGroups = new int[groups.length - nc];
        for (int g = 0, c = 0, w = 0; g < groups.length; g++) {
            if (groups[g].kind().compressed()) {
                compressedGroups[c++] = g;
            } else {
                windowGroups[w++] = g;
            }
        }
        for (PageBucket b : PageBucket.values()) {
            if (layout.hasBucket(b)) {
                pools[b.ordinal()] = new PagePool(b, sizes.pages(b), groups.length);
            }
        }
        PagePool[] poolOfGroup = new PagePool[groups.length];
        for (int g = 0; g < groups.length; g++) {
            poolOfGroup[g] = pools[bucketOf[g]];
        }
        this.boundaryWindows = new BoundaryWindows(kindOf, poolOfGroup, windowGroups,
                compressedGroups.length > 0 ? compressedGroups[0] : -1, hasher);
        this.windowPages = new WindowPages(kindOf, poolOfGroup, windowGroups, boundaryWindows, prefixCaching);
        // Rebuilding layer l's window at T exactly needs layer l-1's window over the previous W-1 positions
        // too, and so on down to layer 0, whose keys depend on token embeddings only.
        this.recomputeDepth = (long) (layout.shape().slidingWindow() - 1) * layout.shape().ratios().size();
    }

    public KvLayout layout() {
        return layout;
    }

    public KvCacheStats stats() {
        return stats;
    }

    /** Requests admitted and not yet freed or preempted. */
    public int liveRequests() {
        return live;
    }

    /**
     * Positions recomputed before a hit boundary when its window pages were evicted: {@code (window-1) x
     * layers}, because every layer's window depends on the previous layer's.
     */
    public long recomputeDepth() {
        return recomputeDepth;
    }

    // ---------------------------------------------------------------- admission

    /** A new request; {@code cacheSalt} (may be null) isolates its prefix-cache entries from other salts. */
    public KvRequest newRequest(String id, int[] promptTokens, String cacheSalt) {
        if (promptTokens.length == 0) {
            throw new IllegalArgumentException("request " + id + ": empty prompt");
        }
        return new KvRequest(id, BlockHash.seed(modelId, cacheSalt), promptTokens, groups.length, windowPages.spareSlots());
    }

    /** Adds a sampled token to the request's known tokens (needed to hash blocks of generated text). */
    public void appendToken(KvRequest r, int token) {
        r.appendToken(token);
    }

    /**
     * Looks the request's known tokens up in the prefix cache. Hits land on 256-position boundaries and
     * never cover the last token. Compressed pages must hit for every block before the boundary T; if the
     * window/state pages before T are cached too the request resumes at T, otherwise it still shares the
     * compressed pages and resumes at the latest earlier boundary whose window is cached, or recomputes
     * the window from {@code T - recomputeDepth()}, whichever computes less. Changes nothing.
     */
    public PrefixMatch match(KvRequest r) {
        return match(r, Long.MAX_VALUE);
    }

    /**
     * Like {@link #match(KvRequest)} for a request that needs the logits of every position from
     * {@code outputsFrom} on (prompt logprobs): the hit ends at a boundary no later than {@code outputsFrom},
     * so those positions are computed and come out as in a cold run. The boundary is what is bounded, not
     * the resume point: positions recomputed only to rebuild an evicted window do not see the whole context.
     * With {@code outputsFrom} below the first boundary there is no hit; the request still publishes its
     * blocks as it computes them.
     */
    public PrefixMatch match(KvRequest r, long outputsFrom) {
        if (!prefixCaching || r.tokenCount < 2 || outputsFrom < B) {
            return PrefixMatch.NONE;
        }
        int maxBlocks = (int) Math.min((r.tokenCount - 1) / B, outputsFrom / B);
        r.ensureHashes(maxBlocks, hasher);
        int h = 0;
        outer:
        while (h < maxBlocks) {
            for (int g : compressedGroups) {
                if (pool(g).lookup(new CacheKey(g, r.hashes.get(h), 0)) < 0) {
                    break outer;
                }
            }
            h++;
        }
        if (h == 0) {
            return PrefixMatch.NONE;
        }
        long floor = Math.max(0, (long) h * B - recomputeDepth);
        for (int t = h; t >= 1 && (long) t * B > floor; t--) {
            if (boundaryWindows.cached(r, (long) t * B)) {
                return new PrefixMatch(h, (long) t * B, true);
            }
        }
        return new PrefixMatch(h, floor, false);
    }

    /**
     * Whether the request's whole remaining prompt (all known tokens from the hit on) can get pages now,
     * counting pinned cached pages that are currently evictable.
     */
    public boolean canAdmit(KvRequest r, PrefixMatch m) {
        Arrays.fill(scratch, 0);
        admissionDemand(r, m, scratch);
        for (int b = 0; b < scratch.length; b++) {
            if (scratch[b] > 0 && (pools[b] == null || scratch[b] > pools[b].free())) {
                return false;
            }
        }
        return true;
    }

    /** New pages per bucket that admitting with {@code m} and computing every known token would take. */
    public StepDemand admissionDemand(KvRequest r, PrefixMatch m) {
        Arrays.fill(scratch, 0);
        admissionDemand(r, m, scratch);
        StepDemand d = new StepDemand();
        for (int b = 0; b < scratch.length; b++) {
            d.add(b, scratch[b]);
        }
        return d;
    }

    private void admissionDemand(KvRequest r, PrefixMatch m, int[] need) {
        long from = m.computeFrom();
        long to = r.tokenCount;
        long blocks = ceilDiv(to, B);
        for (int g : compressedGroups) {
            need[bucketOf[g]] += (int) Math.max(0, blocks - m.sharedBlocks());
            for (int i = 0; i < m.sharedBlocks(); i++) {
                int p = pool(g).lookup(new CacheKey(g, r.hashes.get(i), 0));
                if (p >= 0 && pool(g).evictable(p)) {
                    need[bucketOf[g]]++;
                }
            }
        }
        BoundaryWindow w = m.windowHit() ? boundaryWindows.find(r, from) : null;
        for (int g : windowGroups) {
            KindLayout k = kindOf[g];
            for (int i = 0; w != null && i < boundaryWindows.slotCount(g); i++) {
                int p = boundaryWindows.page(w, g, i);
                if (p >= 0 && pool(g).evictable(p)) {
                    need[bucketOf[g]]++;
                }
            }
            if (to > from) {
                long lo = Math.max(from, k.window().windowStart(to));
                need[bucketOf[g]] += (int) (k.pageIndex(to - 1) - k.pageIndex(lo) + 1);
            }
        }
    }

    /**
     * Pins the matched pages and makes the request runnable from {@code m.computeFrom()}. Call only when
     * {@link #canAdmit} said yes (pinning takes evictable pages off the free lists).
     */
    public void admit(KvRequest r, PrefixMatch m) {
        if (r.state == KvRequest.State.RUNNING || r.state == KvRequest.State.FINISHED) {
            throw new IllegalStateException(r + " cannot be admitted");
        }
        long from = m.computeFrom();
        for (int g : compressedGroups) {
            PageTable t = r.tables[g];
            t.reset(0);
            for (int i = 0; i < m.sharedBlocks(); i++) {
                int p = pool(g).lookup(new CacheKey(g, r.hashes.get(i), 0));
                if (p < 0) {
                    throw new IllegalStateException(r + ": block " + i + " of group " + g + " left the cache between match and admit");
                }
                pool(g).touch(p);
                t.append(p);
            }
        }
        boolean windows = m.windowHit() && boundaryWindows.slots() > 0;
        BoundaryWindow w = windows ? boundaryWindows.find(r, from) : null;
        if (windows && w == null) {
            throw new IllegalStateException(r + ": the window before " + from + " left the cache between match and admit");
        }
        for (int g : windowGroups) {
            KindLayout k = kindOf[g];
            PageTable t = r.tables[g];
            if (w != null && boundaryWindows.slotCount(g) > 0) {
                t.reset(boundaryWindows.firstPage(g, from));
                for (int i = 0; i < boundaryWindows.slotCount(g); i++) {
                    int p = boundaryWindows.page(w, g, i);
                    if (p < 0) {
                        throw new IllegalStateException(r + ": window page " + i + " of group " + g + " left the cache");
                    }
                    pool(g).touch(p);
                    t.append(p);
                }
            } else {
                t.reset(k.pageIndex(from));
            }
        }
        r.computed = from;
        for (int g = 0; g < groups.length; g++) {
            r.slotsFrom[g] = 0;
            refresh(r, g);
        }
        aggregate(r);
        r.compressedWriteFrom = m.sharedPositions();
        r.windowValidFrom = m.windowHit() ? 0 : from;
        r.windowSharedUntil = m.windowHit() ? from : 0;
        r.publishedBlocks = m.sharedBlocks();
        boolean resumed = r.state == KvRequest.State.PREEMPTED;
        r.state = KvRequest.State.RUNNING;
        live++;
        stats.recordAdmission(resumed, r.tokenCount, from, m.recomputedPositions());
    }

    // ---------------------------------------------------------------- per step

    /**
     * New pages of one bucket the request needs so that positions {@code [computed, computed+newTokens)}
     * have their slots (compressed blocks up to the end, and the window that survives the step).
     */
    public int pagesNeeded(KvRequest r, int newTokens, PageBucket bucket) {
        return pagesNeeded(r, newTokens, 0, bucket);
    }

    /** Like {@link #pagesNeeded(KvRequest, int, PageBucket)} for a step whose last {@code draftTokens} may be rejected. */
    public int pagesNeeded(KvRequest r, int newTokens, int draftTokens, PageBucket bucket) {
        int sum = 0;
        for (int g = 0; g < groups.length; g++) {
            if (bucketOf[g] == bucket.ordinal()) {
                sum += poolPages(r, g, newTokens, draftTokens);
            }
        }
        return sum;
    }

    /** Adds the request's page needs for a step to {@code demand}. Allocation-free. */
    public void addDemand(KvRequest r, int newTokens, StepDemand demand) {
        addDemand(r, newTokens, 0, demand);
    }

    /** Like {@link #addDemand(KvRequest, int, StepDemand)} with {@code draftTokens} speculative tokens. */
    public void addDemand(KvRequest r, int newTokens, int draftTokens, StepDemand demand) {
        if (r.computed + newTokens <= r.minCoveredEnd) {
            return;
        }
        for (int g = 0; g < groups.length; g++) {
            demand.add(bucketOf[g], poolPages(r, g, newTokens, draftTokens));
        }
    }

    /** Whether the pools can serve {@code demand} now (cached free pages count as free). */
    public boolean fits(StepDemand demand) {
        for (int b = 0; b < pools.length; b++) {
            int n = demand.pagesAt(b);
            if (n > 0 && (pools[b] == null || n > pools[b].free())) {
                return false;
            }
        }
        return true;
    }

    /** Pages the step takes from the pool: what it maps, less the request's spare window pages. */
    private int poolPages(KvRequest r, int g, int n, int draft) {
        int pages = newPages(r, g, n, draft);
        return pages == 0 ? 0 : Math.max(0, pages - r.spareCount[g]);
    }

    /** Pages the step maps for group {@code g}, spares included. */
    private int newPages(KvRequest r, int g, int n, int draft) {
        if (n <= 0) {
            return 0;
        }
        long c = r.computed;
        long end = c + n;
        if (end <= r.coveredEnd[g]) {
            return 0;
        }
        PageTable t = r.tables[g];
        if (kindOf[g].kind().compressed()) {
            return (int) Math.max(0, ceilDiv(end, B) - t.end());
        }
        return windowPages.needed(r, g, c, n, draft);
    }

    /**
     * Best effort, after every allocation of a step: also maps, for a chunk {@code [computed,
     * computed+newTokens)} that crosses block boundaries, the last window before each boundary T it is sure
     * to pass ({@code [windowStart(T), T)} of SWA and the compressor states), so that the backend writes them
     * and {@link #commit} caches them in T's {@link BoundaryWindow}: a later request sharing the prefix then
     * resumes at any boundary instead of recomputing. Only pages the pools can spare after the step's own
     * allocations are used, boundary by boundary (all window groups of a boundary or none), so this never
     * makes an allocation fail, never preempts anyone and is not part of any demand or admission figure:
     * the step's required transient stays the previous window. Returns the boundaries mapped.
     */
    public int cacheBoundaryWindows(KvRequest r, int newTokens, int draftTokens) {
        requireRunning(r);
        if (!prefixCaching || boundaryWindows.slots() == 0 || newTokens <= 1) {
            return 0;
        }
        long c = r.computed;
        long limit = Math.min(c + Math.max(1, newTokens - Math.max(0, draftTokens)), r.tokenCount);
        int mapped = 0;
        boundaries:
        for (long boundary = (c / B + 1) * B; boundary <= limit; boundary += B) {
            Arrays.fill(scratch, 0);
            boolean any = false;
            for (int g : windowGroups) {
                int missing = windowPages.mapBoundary(r, g, c, newTokens, draftTokens, boundary, false);
                any |= missing > 0;
                scratch[bucketOf[g]] += Math.max(0, missing - r.spareCount[g]);
            }
            if (!any) {
                continue;
            }
            for (int b = 0; b < scratch.length; b++) {
                if (scratch[b] > 0 && (pools[b] == null || scratch[b] > pools[b].free())) {
                    break boundaries;
                }
            }
            for (int g : windowGroups) {
                windowPages.mapBoundary(r, g, c, newTokens, draftTokens, boundary, true);
            }
            mapped++;
        }
        if (mapped > 0) {
            for (int g : windowGroups) {
                refresh(r, g);
            }
            aggregate(r);
        }
        return mapped;
    }

    /**
     * Gives the request pages for positions {@code [computed, computed+newTokens)}; all or nothing. Returns
     * false, changing nothing, when a pool is short (the scheduler then preempts someone or waits).
     */
    public boolean allocate(KvRequest r, int newTokens) {
        return allocate(r, newTokens, 0);
    }

    /**
     * Like {@link #allocate(KvRequest, int)} for a step whose last {@code draftTokens} are speculative:
     * window slots then cover every commit length from {@code newTokens - draftTokens} to {@code newTokens}.
     */
    public boolean allocate(KvRequest r, int newTokens, int draftTokens) {
        requireRunning(r);
        if (newTokens > 0 && r.computed + newTokens <= r.minCoveredEnd) {
            return true;
        }
        Arrays.fill(scratch, 0);
        int[] perGroup = groupScratch;
        for (int g = 0; g < groups.length; g++) {
            perGroup[g] = newPages(r, g, newTokens, draftTokens);
            scratch[bucketOf[g]] += perGroup[g] == 0 ? 0 : Math.max(0, perGroup[g] - r.spareCount[g]);
        }
        for (int b = 0; b < scratch.length; b++) {
            if (scratch[b] > 0 && (pools[b] == null || scratch[b] > pools[b].free())) {
                return false;
            }
        }
        long c = r.computed;
        for (int g = 0; g < groups.length; g++) {
            if (perGroup[g] == 0) {
                continue;
            }
            PageTable t = r.tables[g];
            if (kindOf[g].kind().compressed()) {
                PagePool pool = pool(g);
                for (long v = t.end(), last = ceilDiv(c + newTokens, B); v < last; v++) {
                    t.append(pool.allocate(g));
                }
            } else {
                r.slotsFrom[g] = windowPages.allocate(r, g, c, newTokens, draftTokens);
            }
            refresh(r, g);
        }
        aggregate(r);
        return true;
    }

    /**
     * The step computed {@code computedTokens} positions from {@link KvRequest#computed()} (fewer than
     * allocated when speculative tokens were rejected). Publishes newly complete blocks to the prefix cache
     * and releases window pages that fell wholly behind the window.
     */
    public void commit(KvRequest r, int computedTokens) {
        requireRunning(r);
        if (computedTokens < 0) {
            throw new IllegalArgumentException("negative computed tokens");
        }
        long end = r.computed + computedTokens;
        boolean check = computedTokens > 0 && (end > r.minCoveredEnd || r.computed < r.maxSlotsFrom);
        for (int g = 0; check && g < groups.length; g++) {
            boolean beyond = end > r.coveredEnd[g];
            boolean skipped = r.computed < r.slotsFrom[g];
            if (!beyond && !skipped) {
                continue;
            }
            KindLayout k = kindOf[g];
            boolean windowEmpty = !k.kind().compressed() && k.window().windowStart(end) >= end;
            if (beyond && !windowEmpty) {
                throw new IllegalStateException(r + ": commit of " + computedTokens + " positions beyond its allocation (group " + g + ")");
            }
            if (skipped && !windowEmpty && Math.max(r.computed, k.window().windowStart(end)) < r.slotsFrom[g]) {
                throw new IllegalStateException(r + ": commit of " + computedTokens + " positions leaves a hole in the "
                        + k.kind() + " window; pass the speculative token count to allocate");
            }
        }
        r.computed = end;
        if (computedTokens > 1) {
            windowPages.releaseSpares(r);
        }
        if (prefixCaching) {
            int full = (int) (Math.min(end, r.tokenCount) / B);
            if (full > r.publishedBlocks) {
                r.ensureHashes(full, hasher);
                for (int b = r.publishedBlocks; b < full; b++) {
                    for (int g : compressedGroups) {
                        int p = r.tables[g].page(b);
                        if (p >= 0) {
                            pool(g).publish(p, new CacheKey(g, r.hashes.get(b), 0));
                        }
                    }
                }
                r.publishedBlocks = full;
            }
        }
        if (end < r.minReleaseAt) {
            return;
        }
        boundaryWindows.endPass();
        for (int g : windowGroups) {
            if (end < r.releaseAt[g]) {
                continue;
            }
            KindLayout k = kindOf[g];
            PageTable t = r.tables[g];
            long cut = k.pageIndex(k.window().windowStart(end));
            int drop = (int) Math.min(t.size(), cut - t.base());
            // Decode steps keep what they release for their next pages, up to the group's decode worst case
            // with the table's remaining entries. Multi-position steps keep none, so a chunk's peak never
            // includes spares (peakDemand stays exact).
            int room = windowPages.spareRoom(g, computedTokens, t.size() - drop);
            for (int i = 0; i < drop; i++) {
                windowPages.release(r, g, t.base() + i, t.at(i), room);
            }
            t.dropFront(drop);
            refresh(r, g);
        }
        boundaryWindows.endPass();
        aggregate(r);
    }

    private void aggregate(KvRequest r) {
        long covered = Long.MAX_VALUE;
        long release = Long.MAX_VALUE;
        long slots = 0;
        for (int g = 0; g < groups.length; g++) {
            covered = Math.min(covered, r.coveredEnd[g]);
            release = Math.min(release, r.releaseAt[g]);
            slots = Math.max(slots, r.slotsFrom[g]);
        }
        r.minCoveredEnd = covered;
        r.minReleaseAt = release;
        r.maxSlotsFrom = slots;
    }

    /** Recomputes a group's cached step thresholds after its table changed. */
    private void refresh(KvRequest r, int g) {
        PageTable t = r.tables[g];
        KindLayout k = kindOf[g];
        if (k.kind().compressed()) {
            r.coveredEnd[g] = t.end() * B;
            r.releaseAt[g] = Long.MAX_VALUE;
            return;
        }
        r.coveredEnd[g] = k.firstPosition(t.end());
        if (t.size() == 0) {
            r.releaseAt[g] = Long.MAX_VALUE;
        } else {
            // smallest commit end whose window start passes the front page's end
            long e = k.endPosition(t.base());
            int stride = k.window().stride();
            r.releaseAt[g] = stride * (ceilDiv(e, stride) + k.window().blocks() - 1);
        }
    }

    /** Releases every page of a finished or aborted request; complete blocks stay cached. */
    public void free(KvRequest r) {
        if (r.state == KvRequest.State.FINISHED) {
            return;
        }
        releaseAll(r);
        r.state = KvRequest.State.FINISHED;
    }

    /**
     * Takes every page back (they stay cached under their hashes) and resets the request to 0 computed
     * positions; re-{@link #match} and {@link #admit} it later to resume, usually with a prefix hit.
     */
    public void preempt(KvRequest r) {
        requireRunning(r);
        releaseAll(r);
        r.state = KvRequest.State.PREEMPTED;
        r.computed = 0;
        r.preemptions++;
        stats.recordPreemption();
    }

    private void releaseAll(KvRequest r) {
        boolean wasLive = r.state == KvRequest.State.RUNNING;
        boundaryWindows.endPass();
        // Tail first, so that among this request's cached pages the end of the chain is evicted first.
        windowPages.releaseSpares(r);
        for (int g = groups.length - 1; g >= 0; g--) {
            PageTable t = r.tables[g];
            boolean compressed = kindOf[g].kind().compressed();
            for (int i = t.size() - 1; i >= 0; i--) {
                int p = t.at(i);
                if (compressed) {
                    if (p >= 0) {
                        pool(g).release(p);
                    }
                } else {
                    windowPages.release(r, g, t.base() + i, p, 0);
                }
            }
            t.reset(0);
            r.coveredEnd[g] = 0;
            r.releaseAt[g] = Long.MAX_VALUE;
            r.slotsFrom[g] = 0;
        }
        boundaryWindows.endPass();
        aggregate(r);
        if (wasLive) {
            live--;
        }
    }

    // ---------------------------------------------------------------- backend view and accounting

    /** Physical page holding {@code position} for a kind group, or -1 (not held: skip the write). */
    public int pageOf(KvRequest r, int group, long position) {
        return r.tables[group].page(kindOf[group].pageIndex(position));
    }

    /**
     * Whether a sequence of {@code tokens} positions could ever fit the empty pools, decoded one position
     * per step (see {@link #canEverFit(long, int)} for prefill in chunks).
     */
    public boolean canEverFit(long tokens) {
        return fitsEmpty(KvPoolSizes.demand(layout, tokens));
    }

    /**
     * Whether a sequence of {@code tokens} positions, prefilled (or recomputed after preemption) alone in
     * chunks of {@code chunk} positions and decoded after, could ever fit the empty pools.
     */
    public boolean canEverFit(long tokens, int chunk) {
        return fitsEmpty(peakDemand(tokens, chunk));
    }

    private boolean fitsEmpty(long[] d) {
        for (int b = 0; b < pools.length; b++) {
            if (d[b] > 0 && (pools[b] == null || d[b] > pools[b].capacity())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Pages per bucket one sequence of {@code tokens} positions holds at its peak when it is computed from 0
     * in chunks of {@code chunk} positions (the last one shorter) and then decoded one position per step.
     * Exact for this manager's mapping (it replays {@link #allocate}/{@link #commit}'s window rules on
     * scratch tables; best-effort boundary windows are not demand); O(tokens / chunk) steps.
     */
    public long[] peakDemand(long tokens, int chunk) {
        if (tokens <= 0 || chunk <= 0) {
            throw new IllegalArgumentException("tokens and chunk must be positive: " + tokens + ", " + chunk);
        }
        long[] peak = new long[pools.length];
        long[] now = new long[pools.length];
        PageTable[] tables = new PageTable[groups.length];
        for (int g : windowGroups) {
            tables[g] = new PageTable();
        }
        for (long c = 0; c < tokens; ) {
            int n = (int) Math.min(chunk, tokens - c);
            Arrays.fill(now, 0);
            for (int g : compressedGroups) {
                now[bucketOf[g]] += ceilDiv(c + n, B);
            }
            for (int g : windowGroups) {
                PageTable t = tables[g];
                windowPages.map(g, c, n, 0, t, null, true);
                for (int i = 0; i < t.size(); i++) {
                    if (t.at(i) >= 0) {
                        now[bucketOf[g]]++;
                    }
                }
            }
            for (int b = 0; b < peak.length; b++) {
                peak[b] = Math.max(peak[b], now[b]);
            }
            c += n;
            for (int g : windowGroups) {
                KindLayout k = kindOf[g];
                PageTable t = tables[g];
                t.dropFront((int) Math.min(t.size(), k.pageIndex(k.window().windowStart(c)) - t.base()));
            }
        }
        long[] decode = KvPoolSizes.demand(layout, tokens);
        for (int b = 0; b < peak.length; b++) {
            peak[b] = Math.max(peak[b], decode[b]);
        }
        return peak;
    }

    /** Page accounting of one bucket; {@code free} excludes cached pages. */
    public BucketUsage usage(PageBucket bucket) {
        PagePool p = pools[bucket.ordinal()];
        if (p == null) {
            return new BucketUsage(bucket, 0, 0, 0, 0);
        }
        return new BucketUsage(bucket, p.capacity(), p.used(), p.cachedFree(), p.free() - p.cachedFree());
    }

    /** Pages currently referenced by live requests for one kind, over all its groups. */
    public long pagesInUse(CacheKind kind) {
        long sum = 0;
        for (int g = 0; g < groups.length; g++) {
            if (groups[g].kind() == kind) {
                sum += pool(g).inUse(g);
            }
        }
        return sum;
    }

    PagePool poolOf(PageBucket bucket) {
        return pools[bucket.ordinal()];
    }

    /** Spare window pages a request holds for a group outside its table (tests and leak checks). */
    int[] spares(KvRequest r, int group) {
        return windowPages.spares(r, group);
    }

    /** Reference count of a page (tests and leak checks). */
    int refs(PageBucket bucket, int page) {
        return pools[bucket.ordinal()].refs(page);
    }

    /** Owning group of a page, -1 when free and uncached (tests). */
    int owner(PageBucket bucket, int page) {
        return pools[bucket.ordinal()].owner(page);
    }

    /**
     * Page counts of one bucket.
     *
     * @param total  pages in the pool
     * @param used   pages referenced by at least one request
     * @param cached free pages still holding prefix-cache content (evictable, count as free for admission)
     * @param free   pages neither used nor cached
     */
    public record BucketUsage(PageBucket bucket, long total, long used, long cached, long free) {
    }

    private PagePool pool(int g) {
        return pools[bucketOf[g]];
    }

    private static void requireRunning(KvRequest r) {
        if (r.state != KvRequest.State.RUNNING) {
            throw new IllegalStateException(r + " is not running");
        }
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
