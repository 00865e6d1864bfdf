package io.strata.platform.engine;

/**
 * What the scheduler needs from the KV cache manager, in native token positions. Called only from the
 * engine thread. An implementation keeps its per-sequence state (block tables) in
 * {@link Sequence#kvState(Object)}.
 */
public interface KvCache {

    /**
     * At a sequence's first admission: the number of leading tokens already in the prefix cache
     * (never the last prompt token), pinned for this sequence. 0 when nothing hits.
     */
    int acquirePrefix(Sequence seq);

    /**
     * Reserves pages for tokens {@code [seq.numComputed(), seq.numComputed() + numNew)}. Returns false and
     * reserves nothing when the pools cannot hold them (the scheduler then preempts).
     */
    boolean allocate(Sequence seq, int numNew);

    /** The step computed the reserved tokens: full blocks may now enter the prefix cache. */
    void committed(Sequence seq);

    /** Releases every page of the sequence (finish, abort, preemption); full blocks stay cached. */
    void free(Sequence seq);

    /** Whether a sequence of this many tokens fits the pools at all (else it can never be admitted). */
    boolean canEverFit(int tokens);

    /** Page accounting for metrics and the leak check. */
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
    }
}
