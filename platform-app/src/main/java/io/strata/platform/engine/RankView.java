package io.strata.platform.engine;

import io.strata.platform.engine.kv.BlockHash;

import java.util.Set;

/**
 * What the router knows about one rank, immutable, built from what the rank published: whether it serves,
 * its load, and the blocks its prefix cache holds.
 *
 * @param loadTokens   tokens whose KV the rank holds for its sequences (published after each step) plus
 *                     prompt tokens queued there and not yet prefilled (counted at submit)
 * @param cachedBlocks hashes of the blocks its prefix cache holds (the KV manager's chained block hashes)
 */
public record RankView(int rank, boolean up, long loadTokens, Set<BlockHash> cachedBlocks) {
    public RankView {
        cachedBlocks = Set.copyOf(cachedBlocks);
    }
}
