package io.strata.platform.engine;

/**
 * What the scheduler needs from the KV cache manager, in native token positions. Called only from the
 * engine thread. An implementation keeps its per-sequence state in {@link Sequence#kvState(Object)}.
 */
public interface KvCache {

    /**
     * Admits a waiting sequence if its whole remaining prompt can get pages now: looks it up in the prefix
     * cache, pins the hit and returns the first position to compute (the tokens before it are served from
     * the cache). The hit never reaches past {@link Sequence#logitsNeededFrom()}: positions whose logits the
     * sequence needs are computed. Returns -1, changing nothing, when it does not fit yet.
     */
    int admit(Sequence seq);

    /**
     * Reserves pages for tokens {@code [seq.numComputed(), seq.numComputed() + numNew)}. Returns false and
     * reserves nothing when the pools cannot hold them (the scheduler then preempts).
     */
    boolean allocate(Sequence seq, int numNew);

    /**
     * After every allocation of a step: lets a chunk that crosses block boundaries also keep the windows
     * before them for the prefix cache, with pages nobody needs this step (best effort, never fails).
     */
    void cacheBoundaries(Sequence seq, int numNew);

    /** The step computed {@code count} reserved tokens: complete blocks may now enter the prefix cache. */
    void committed(Sequence seq, int count);

    /** A sampled token joined the sequence (its blocks are hashed with it). */
    void appendToken(Sequence seq, int token);

    /** Preemption: every page back (they stay cached), progress reset to 0; the sequence may be admitted again. */
    void release(Sequence seq);

    /** The sequence is finished or aborted: every page back, complete blocks stay cached. Idempotent. */
    void free(Sequence seq);

    /**
     * Whether a sequence of this many tokens fits the empty pools at all (else it can never be admitted),
     * prefilled alone in chunks of at most {@code chunk} tokens.
     */
    boolean canEverFit(int tokens, int chunk);

    /** Page accounting over all pools, for metrics and the leak check. */
    Usage usage();

    /**
     * @param totalPages  pages in all pools
     * @param usedPages   pages referenced by live sequences
     * @param cachedPages free pages still holding prefix-cache content (evictable)
     * @param freePages   pages neither used nor cached
     */
    record Usage(long totalPages, long usedPages, long cachedPages, long freePages) {
        public double usedFraction() {
            return totalPages == 0 ? 0 : (double) usedPages / totalPages;
        }

        /** No leak: every page is free or cached. */
        public boolean allFreeOrCached() {
            return usedPages == 0 && cachedPages + freePages == totalPages;
        }
    }
}
