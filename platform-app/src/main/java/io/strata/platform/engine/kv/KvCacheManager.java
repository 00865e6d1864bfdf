package io.strata.platform.engine.kv;

import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The hybrid KV cache manager, the scheduler's one entry to the cache: decides which page of which bucket
 * pool holds what, for every request and every kind group. Backends own the bytes (see {@link KvLayout}).
 * This class orchestrates; the kinds of group do the work: {@link CompressedGroups} (blocks, prefix hits,
 * publishing), {@link WindowPages} (sliding windows, spares) with {@link BoundaryWindows} (the window side of
 * the prefix cache), over {@link PagePools}. {@link KvCapacity} answers what can ever fit, from any thread.
 *
 * <p>Everything is in native token positions; no caller needs to know compress ratios or page sizes.
 * A request goes through:
 * <ol>
 *   <li>{@link #newRequest} with its prompt (any thread); {@link #match} looks the prompt up in the prefix
 *       cache; {@link #canAdmit} checks the whole remaining prompt fits now; {@link #admit} pins the hit and
 *       sets {@link KvRequest#computed()} to {@link PrefixMatch#computeFrom()}.</li>
 *   <li>Each step: {@link #allocate} for the positions {@code [computed, computed+n)} the step will write
 *       (all or nothing), {@link #cacheBoundaryWindows} once every allocation of the step is done, then after
 *       the step {@link #commit} the positions computed. Sampled tokens go in with
 *       {@link KvRequest#appendToken}.</li>
 *   <li>{@link #free} when finished or aborted; {@link #preempt} to give everything back and later
 *       re-{@link #match}/{@link #admit} the same request (its hashes are kept, its pages stay cached);
 *       {@link #unadmit} when an admission is rolled back within the step that made it.</li>
 * </ol>
 *
 * <p>Window kinds only get pages for the window that survives a step: inside a long prefill chunk the
 * positions that fall behind the window before the chunk ends get no page at all (their slot is -1), so a
 * chunk costs no transient pages beyond its final window. Pages wholly behind the window are released at
 * {@link #commit}.
 *
 * <p>Engine thread only, except {@link #newRequest}, {@link #capacity()}, {@link #layout()} and
 * {@link #stats()}. The per-step methods allocate nothing except when a page is published to the prefix
 * cache (once per block per group).
 *
 * <p>(Longer than ~400 lines because the contract of each lifecycle call is written out here, where the
 * scheduler reads it; the code per call is a few lines over the group kinds.)
 */
public final class KvCacheManager {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final KvLayout layout;
    private final String modelId;
    private final boolean prefixCaching;
    private final PagePools pools;
    private final KvCapacity capacity;
    private final KindGroup[] groups;
    private final int[] bucketOf;
    /** Per group, its kind: {@link #compressed} or {@link #windows}. */
    private final GroupPages[] kindOf;
    private final CompressedGroups compressed;
    private final WindowPages windows;
    private final BoundaryWindows boundaryWindows;
    private final long recomputeDepth;
    private final KvCacheStats stats = new KvCacheStats();
    private final long[] need = new long[PageBucket.values().length];
    private final int[] perGroup;
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
        this.capacity = new KvCapacity(layout, sizes);
        List<KindGroup> gs = layout.groups();
        this.groups = gs.toArray(KindGroup[]::new);
        this.pools = new PagePools(layout, sizes, groups.length);
        this.perGroup = new int[groups.length];
        KindLayout[] kinds = new KindLayout[groups.length];
        this.bucketOf = new int[groups.length];
        PagePool[] poolOfGroup = new PagePool[groups.length];
        List<Integer> compressedIds = new ArrayList<>();
        List<Integer> windowIds = new ArrayList<>();
        for (int g = 0; g < groups.length; g++) {
            kinds[g] = layout.kindOf(groups[g]);
            bucketOf[g] = groups[g].bucket().ordinal();
            poolOfGroup[g] = pools.at(bucketOf[g]);
            (groups[g].kind().compressed() ? compressedIds : windowIds).add(g);
        }
        int[] windowGroups = windowIds.stream().mapToInt(Integer::intValue).toArray();
        this.compressed = new CompressedGroups(compressedIds.stream().mapToInt(Integer::intValue).toArray(), poolOfGroup,
                bucketOf, prefixCaching);
        this.boundaryWindows = new BoundaryWindows(kinds, poolOfGroup, windowGroups, compressed.anchorGroup(), hasher);
        this.windows = new WindowPages(kinds, poolOfGroup, bucketOf, windowGroups, boundaryWindows, prefixCaching);
        this.kindOf = new GroupPages[groups.length];
        for (int g = 0; g < groups.length; g++) {
            kindOf[g] = groups[g].kind().compressed() ? compressed : windows;
        }
        // Rebuilding layer l's window at T exactly needs layer l-1's window over the previous W-1 positions
        // too, and so on down to layer 0, whose keys depend on token embeddings only.
        this.recomputeDepth = (long) (layout.shape().slidingWindow() - 1) * layout.shape().ratios().size();
    }

    public KvLayout layout() {
        return layout;
    }

    /** What the pools can ever hold; safe from any thread. */
    public KvCapacity capacity() {
        return capacity;
    }

    /** Prefix-cache and preemption counters; safe from any thread. */
    public KvCacheStats stats() {
        return stats;
    }

    /**
     * Changes whenever a block enters or leaves the prefix cache of the first compressed group (the group
     * {@link #cachedBlocks} reads). Engine thread only.
     */
    public long cachedBlocksVersion() {
        int g = compressed.anchorGroup();
        return g < 0 ? 0 : pools.at(bucketOf[g]).indexChanges();
    }

    /**
     * The hashes of the blocks the prefix cache holds for the first compressed group, in use or evictable:
     * what a router needs to guess where a prompt's leading blocks would hit ({@link #match} also requires
     * the other compressed groups, which normally hold the same blocks). Empty without prefix caching.
     * Engine thread only; costs a walk over the group's pool, so call it when {@link #cachedBlocksVersion}
     * changed.
     */
    public java.util.Set<BlockHash> cachedBlocks() {
        int g = compressed.anchorGroup();
        if (!prefixCaching || g < 0) {
            return java.util.Set.of();
        }
        java.util.Set<BlockHash> out = new java.util.HashSet<>();
        pools.at(bucketOf[g]).indexedBlocks(g, out);
        return java.util.Set.copyOf(out);
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

    /**
     * A new request; {@code cacheSalt} (may be null) isolates its prefix-cache entries from other salts. Safe
     * from any thread: it touches no pool.
     */
    public KvRequest newRequest(String id, int[] promptTokens, String cacheSalt) {
        if (promptTokens.length == 0) {
            throw new IllegalArgumentException("request " + id + ": empty prompt");
        }
        return new KvRequest(id, BlockHash.seed(modelId, cacheSalt), promptTokens, groups.length, windows.spareSlots());
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
        int h = compressed.hitBlocks(r, maxBlocks);
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
        Arrays.fill(need, 0);
        compressed.admissionDemand(r, m, r.tokenCount, need);
        windows.admissionDemand(r, m, r.tokenCount, need);
        return pools.fitsNow(need);
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
        compressed.pin(r, m);
        windows.pin(r, m);
        r.computed = from;
        for (int g = 0; g < groups.length; g++) {
            r.slotsFrom[g] = 0;
            kindOf[g].refresh(r, g);
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
     * Gives the request pages for positions {@code [computed, computed+newTokens)}; all or nothing. Returns
     * false, changing nothing, when a pool is short (the scheduler then preempts someone or waits).
     */
    public boolean allocate(KvRequest r, int newTokens) {
        requireRunning(r);
        if (newTokens > 0 && r.computed + newTokens <= r.minCoveredEnd) {
            return true;
        }
        Arrays.fill(need, 0);
        stepDemand(r, newTokens, need);
        if (!pools.fitsNow(need)) {
            return false;
        }
        long c = r.computed;
        for (int g = 0; g < groups.length; g++) {
            if (perGroup[g] != 0) {
                r.slotsFrom[g] = kindOf[g].allocate(r, g, c, newTokens);
                kindOf[g].refresh(r, g);
            }
        }
        aggregate(r);
        return true;
    }

    /**
     * Adds to {@code need} (per bucket) the pool pages a step of {@code newTokens} positions takes: what each
     * group maps, less the request's spare window pages; leaves each group's own count in {@link #perGroup}.
     * The one demand computation, also read by tests.
     */
    void stepDemand(KvRequest r, int newTokens, long[] need) {
        long c = r.computed;
        long end = c + newTokens;
        for (int g = 0; g < groups.length; g++) {
            int pages = newTokens <= 0 || end <= r.coveredEnd[g] ? 0 : kindOf[g].newPages(r, g, c, newTokens);
            perGroup[g] = pages;
            need[bucketOf[g]] += pages == 0 ? 0 : Math.max(0, pages - r.spareCount[g]);
        }
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
    public int cacheBoundaryWindows(KvRequest r, int newTokens) {
        requireRunning(r);
        if (!prefixCaching || boundaryWindows.slots() == 0 || newTokens <= 1) {
            return 0;
        }
        long c = r.computed;
        long limit = Math.min(c + newTokens, r.tokenCount);
        int mapped = 0;
        for (long boundary = (c / B + 1) * B; boundary <= limit; boundary += B) {
            Arrays.fill(need, 0);
            if (!windows.boundaryNeed(r, c, newTokens, boundary, need)) {
                continue;
            }
            if (!pools.fitsNow(need)) {
                break;
            }
            windows.mapBoundary(r, c, newTokens, boundary);
            mapped++;
        }
        if (mapped > 0) {
            for (int g = 0; g < groups.length; g++) {
                kindOf[g].refresh(r, g);
            }
            aggregate(r);
        }
        return mapped;
    }

    /**
     * The step computed {@code computedTokens} positions from {@link KvRequest#computed()}. Publishes newly
     * complete blocks to the prefix cache and releases window pages that fell wholly behind the window.
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
            long kept = kindOf[g].keptFrom(g, end);
            boolean windowEmpty = kept >= end;
            if (beyond && !windowEmpty) {
                throw new IllegalStateException(r + ": commit of " + computedTokens + " positions beyond its allocation (group " + g + ")");
            }
            if (skipped && !windowEmpty && Math.max(r.computed, kept) < r.slotsFrom[g]) {
                throw new IllegalStateException(r + ": commit of " + computedTokens + " positions leaves a hole in the "
                        + groups[g].kind() + " window; commit what was allocated");
            }
        }
        r.computed = end;
        if (computedTokens > 1) {
            windows.releaseSpares(r);
        }
        compressed.publish(r, end, hasher);
        if (end < r.minReleaseAt) {
            return;
        }
        windows.releaseBehindWindow(r, end, computedTokens);
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

    // ---------------------------------------------------------------- giving pages back

    /** Releases every page of a finished or aborted request; complete blocks stay cached. Idempotent. */
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

    /**
     * Rolls back an admission made in this step whose first allocation failed: every page back, 0 computed,
     * the request waits as before (not counted as a preemption: it never ran).
     */
    public void unadmit(KvRequest r) {
        requireRunning(r);
        releaseAll(r);
        r.state = r.preemptions > 0 ? KvRequest.State.PREEMPTED : KvRequest.State.WAITING;
        r.computed = 0;
    }

    private void releaseAll(KvRequest r) {
        boolean wasLive = r.state == KvRequest.State.RUNNING;
        boundaryWindows.endPass();
        // Tail first, so that among this request's cached pages the end of the chain is evicted first.
        windows.releaseSpares(r);
        for (int g = groups.length - 1; g >= 0; g--) {
            kindOf[g].releaseTable(r, g);
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

    /**
     * Forgets the whole prefix cache, for when the backend's KV bytes are gone (a worker process restarted with
     * fresh pools): no later request may hit a page computed before. Call with no request holding pages (fail
     * or free the running ones first); waiting and preempted requests keep their hashes and simply miss.
     *
     * @return pages that held cached content
     * @throws IllegalStateException while a request still holds pages
     */
    public int dropPrefixCache() {
        if (live > 0) {
            throw new IllegalStateException(live + " requests still hold pages; free them before dropping the prefix cache");
        }
        int dropped = 0;
        for (PageBucket b : PageBucket.values()) {
            PagePool p = pools.of(b);
            if (p != null) {
                dropped += p.dropCached();
            }
        }
        return dropped;
    }

    // ---------------------------------------------------------------- accounting

    /** Page accounting now, as an immutable snapshot (take it on the engine thread, read it anywhere). */
    public KvUsage usage() {
        return pools.usage(groups);
    }

    PagePool poolOf(PageBucket bucket) {
        return pools.of(bucket);
    }

    /** Spare window pages a request holds for a group outside its table (tests and leak checks). */
    int[] spares(KvRequest r, int group) {
        return windows.spares(r, group);
    }

    /** Reference count of a page (tests and leak checks). */
    int refs(PageBucket bucket, int page) {
        return pools.of(bucket).refs(page);
    }

    /** Owning group of a page, -1 when free and uncached (tests). */
    int owner(PageBucket bucket, int page) {
        return pools.of(bucket).owner(page);
    }

    private static void requireRunning(KvRequest r) {
        if (r.state != KvRequest.State.RUNNING) {
            throw new IllegalStateException(r + " is not running");
        }
    }
}
