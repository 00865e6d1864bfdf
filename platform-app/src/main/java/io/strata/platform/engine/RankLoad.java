package io.strata.platform.engine;

/**
 * One rank's load as the console shows it, from what the rank published. A single engine (one rank) publishes
 * no held tokens and no cached blocks, so its load is its queued prompt tokens and its block count 0.
 *
 * @param loadTokens     what the router balances on ({@link RankView#loadTokens()})
 * @param cachedBlocks   blocks its prefix cache holds
 * @param kvUsedFraction share of its KV pages referenced by running sequences
 * @param prefixQueries  prompt tokens of new requests looked up in its prefix cache
 * @param prefixHits     of those, tokens served from it
 */
public record RankLoad(int rank, boolean up, long steps, int running, int waiting, long loadTokens, int cachedBlocks,
                       double kvUsedFraction, long prefixQueries, long prefixHits) {

    static RankLoad of(RankView view, EngineSnapshot s) {
        return new RankLoad(view.rank(), view.up(), s.steps(), s.running(), s.waiting(), view.loadTokens(),
                view.cachedBlocks().size(), s.kv().usedFraction(), s.prefix().queries(), s.prefix().hits());
    }
}
