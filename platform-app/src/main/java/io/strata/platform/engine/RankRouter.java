package io.strata.platform.engine;

import io.strata.kv.KvLayout;
import io.strata.platform.engine.kv.BlockHash;

import java.util.ArrayList;
import java.util.List;

/**
 * Chooses the rank for a new request from the ranks' published views. The rule:
 * <ol>
 *   <li><b>prefix affinity</b>: hash the prompt's leading full 256-token blocks with the KV manager's chained
 *       block hash (seeded with the model and the request's cache salt) and keep the ranks that hold the
 *       longest run of them from the first block; if some rank holds at least the first block, the request
 *       goes to one of those, whatever the load;</li>
 *   <li>otherwise, or among ranks with the same longest run, the <b>least loaded</b> rank
 *       ({@link RankView#loadTokens()});</li>
 *   <li>ties go to the <b>lowest rank</b>.</li>
 * </ol>
 * Ranks that are not up are never chosen unless none is. Like the manager's lookup, the last prompt token is
 * never part of a block that can hit. Stateless, so any thread may call it.
 */
public final class RankRouter {

    private static final int B = KvLayout.BLOCK_POSITIONS;

    private final String modelId;

    public RankRouter(String modelId) {
        this.modelId = modelId;
    }

    /**
     * The chosen rank.
     *
     * @param prefixBlocks leading blocks of the prompt the chosen rank's prefix cache holds (0: chosen by load)
     */
    public record Choice(int rank, int prefixBlocks) {
    }

    public Choice choose(List<RankView> ranks, int[] prompt, String cacheSalt) {
        if (ranks.isEmpty()) {
            throw new IllegalArgumentException("no ranks to choose from");
        }
        List<RankView> candidates = ranks.stream().filter(RankView::up).toList();
        if (candidates.isEmpty()) {
            candidates = ranks;
        }
        int maxBlocks = Math.max(0, (prompt.length - 1) / B);
        int depth = 0;
        BlockHash hash = BlockHash.seed(modelId, cacheSalt);
        while (depth < maxBlocks) {
            hash = hash.next(prompt, depth * B, B);
            List<RankView> holders = new ArrayList<>();
            for (RankView r : candidates) {
                if (r.cachedBlocks().contains(hash)) {
                    holders.add(r);
                }
            }
            if (holders.isEmpty()) {
                break;
            }
            candidates = holders;
            depth++;
        }
        return new Choice(leastLoaded(candidates).rank(), depth);
    }

    private static RankView leastLoaded(List<RankView> ranks) {
        RankView best = ranks.getFirst();
        for (RankView r : ranks) {
            if (r.loadTokens() < best.loadTokens() || (r.loadTokens() == best.loadTokens() && r.rank() < best.rank())) {
                best = r;
            }
        }
        return best;
    }
}
