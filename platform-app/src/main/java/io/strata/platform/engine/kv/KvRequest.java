package io.strata.platform.engine.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One request's record on the KV side, and the only copy of its tokens: the tokens (prompt, then generated),
 * its page tables (one per kind group), how far the cache is computed, its lifecycle and preemptions. The
 * engine's {@code Sequence} owns one, created at submit by {@link KvCacheManager#newRequest}; after that it is
 * read and changed only on the engine thread, through the manager (and {@link #appendToken} for a sampled
 * token). The group arrays are the per-group state of the manager's group kinds ({@link CompressedGroups},
 * {@link WindowPages}).
 */
public final class KvRequest {

    /**
     * Lifecycle: queued and never admitted, admitted and holding pages, back in the queue after a preemption
     * (to be recomputed), finished or aborted (every page returned).
     */
    public enum State { WAITING, RUNNING, PREEMPTED, FINISHED }

    private final String id;
    private final BlockHash seed;
    final PageTable[] tables;
    /** Per group: positions below this have a slot or were skipped; a step ending at or below needs no page. */
    final long[] coveredEnd;
    /** Per group: the commit end at which the table's front page falls behind the window. */
    final long[] releaseAt;
    /** Per group: first slotted position of the latest allocation (positions before it were skipped). */
    final long[] slotsFrom;
    /** Aggregates of the three arrays above, so a step that touches no page costs O(1) per request. */
    long minCoveredEnd;
    long minReleaseAt = Long.MAX_VALUE;
    long maxSlotsFrom;
    /**
     * Window pages this request released and keeps for its next window allocations (per group a stack at
     * {@link WindowPages}' offset, {@link #spareCount} deep), so that decode-time page turnover stays off the
     * pools. Counted as used: they are what the request holds at its worst decode step anyway.
     */
    final int[] spares;
    final int[] spareCount;
    final List<BlockHash> hashes = new ArrayList<>();
    int[] tokens;
    int tokenCount;
    long computed;
    long compressedWriteFrom;
    long windowValidFrom;
    /** Window pages of positions below this came from a prefix hit: shared, never recycled as spares. */
    long windowSharedUntil;
    int publishedBlocks;
    int preemptions;
    State state = State.WAITING;

    KvRequest(String id, BlockHash seed, int[] prompt, int groups, int spareSlots) {
        this.id = id;
        this.seed = seed;
        // room for the answer, so decode steps rarely copy the token array
        this.tokens = Arrays.copyOf(prompt, Math.max(1024, prompt.length + prompt.length / 4));
        this.tokenCount = prompt.length;
        this.tables = new PageTable[groups];
        this.coveredEnd = new long[groups];
        this.releaseAt = new long[groups];
        this.slotsFrom = new long[groups];
        this.spares = new int[spareSlots];
        this.spareCount = new int[groups];
        for (int g = 0; g < groups; g++) {
            tables[g] = new PageTable();
        }
    }

    public String id() {
        return id;
    }

    public State state() {
        return state;
    }

    /** Positions whose KV (compressed entries, window and states) is written. */
    public long computed() {
        return computed;
    }

    /** Known tokens: prompt plus generated. */
    public int tokenCount() {
        return tokenCount;
    }

    /** Token {@code i} of the prompt-then-output sequence. */
    public int token(int i) {
        if (i >= tokenCount) {
            throw new IndexOutOfBoundsException(i + " >= " + tokenCount);
        }
        return tokens[i];
    }

    /** A copy of tokens {@code [from, to)}. */
    public int[] tokens(int from, int to) {
        if (to > tokenCount) {
            throw new IndexOutOfBoundsException(to + " > " + tokenCount);
        }
        return Arrays.copyOfRange(tokens, from, to);
    }

    /** Kind groups (one page table each). */
    public int groups() {
        return tables.length;
    }

    /**
     * Backends must not write compressed entries (C4A, C128A, indexer) for positions below this: those
     * pages are shared from the prefix cache. Positions at or above it are written normally.
     */
    public long compressedWriteFrom() {
        return compressedWriteFrom;
    }

    /**
     * Window reads (SWA keys, compressor state) below this position are absent and must be masked. It is 0
     * except right after a prefix hit resumed by recomputing the window.
     */
    public long windowValidFrom() {
        return windowValidFrom;
    }

    /** The block table of a kind group (see {@link io.strata.kv.KindGroup#id()}). */
    public PageTable table(int group) {
        return tables[group];
    }

    public int preemptions() {
        return preemptions;
    }

    BlockHash seed() {
        return seed;
    }

    /** A sampled token joined the request (blocks of generated text are hashed with it). Engine thread only. */
    public void appendToken(int token) {
        if (tokenCount == tokens.length) {
            tokens = Arrays.copyOf(tokens, tokens.length * 2);
        }
        tokens[tokenCount++] = token;
    }

    /** Hashes of the first {@code blocks} full blocks of known tokens (computed on demand). */
    void ensureHashes(int blocks, BlockHasher hasher) {
        int b = io.strata.kv.KvLayout.BLOCK_POSITIONS;
        blocks = Math.min(blocks, tokenCount / b);
        while (hashes.size() < blocks) {
            int i = hashes.size();
            BlockHash prev = i == 0 ? seed : hashes.get(i - 1);
            hashes.add(hasher.next(prev, tokens, i * b, b));
        }
    }

    @Override
    public String toString() {
        return "KvRequest[" + id + ", " + state + ", computed " + computed + "/" + tokenCount + "]";
    }
}
