package io.strata.platform.engine;

import io.strata.platform.engine.kv.BlockHash;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The routing rule on hand-made rank views: prefix affinity first, then the least load, then the lowest rank. */
class RankRouterTest {
    private static final String MODEL = "dsv4-tiny-stable";
    private final RankRouter router = new RankRouter(MODEL);

    private static int[] prompt(int length, int seed) {
        return IntStream.range(0, length).map(i -> 20 + (i * 37 + i / 7 + seed * 101) % 1000).toArray();
    }

    /** The chained hashes of the prompt's first {@code blocks} blocks, as the KV manager computes them. */
    private static List<BlockHash> blocks(int[] prompt, int blocks, String salt) {
        List<BlockHash> out = new ArrayList<>();
        BlockHash h = BlockHash.seed(MODEL, salt);
        for (int b = 0; b < blocks; b++) {
            h = h.next(prompt, b * 256, 256);
            out.add(h);
        }
        return out;
    }

    private static RankView rank(int rank, long load, List<BlockHash> cached) {
        return new RankView(rank, true, load, Set.copyOf(cached));
    }

    @Test
    void affinityWinsOverLoad() {
        int[] p = prompt(700, 1);
        List<RankView> ranks = List.of(rank(0, 0, List.of()), rank(1, 50_000, blocks(p, 2, null)), rank(2, 10, List.of()));
        assertThat(router.choose(ranks, p, null)).isEqualTo(new RankRouter.Choice(1, 2));
    }

    @Test
    void theLongestLeadingRunWinsAndOnlyALeadingRunCounts() {
        int[] p = prompt(1100, 2);
        List<BlockHash> all = blocks(p, 4, null);
        List<RankView> ranks = List.of(
                rank(0, 0, all.subList(0, 1)),
                rank(1, 900, all.subList(0, 3)),
                rank(2, 0, all.subList(1, 4)));          // holds later blocks but not the first: no affinity
        assertThat(router.choose(ranks, p, null)).isEqualTo(new RankRouter.Choice(1, 3));
    }

    @Test
    void equalRunsGoToTheLeastLoadedOfThem() {
        int[] p = prompt(600, 3);
        List<BlockHash> two = blocks(p, 2, null);
        List<RankView> ranks = List.of(rank(0, 0, List.of()), rank(1, 500, two), rank(2, 400, two));
        assertThat(router.choose(ranks, p, null)).isEqualTo(new RankRouter.Choice(2, 2));
    }

    @Test
    void withoutAHitTheLeastLoadedRankWins() {
        int[] p = prompt(600, 4);
        List<BlockHash> other = blocks(prompt(600, 5), 2, null);
        List<RankView> ranks = List.of(rank(0, 300, other), rank(1, 200, List.of()), rank(2, 250, List.of()));
        assertThat(router.choose(ranks, p, null)).isEqualTo(new RankRouter.Choice(1, 0));
    }

    @Test
    void tiesGoToTheLowestRank() {
        int[] p = prompt(100, 6);
        assertThat(router.choose(List.of(rank(0, 0, List.of()), rank(1, 0, List.of())), p, null).rank()).isZero();
        assertThat(router.choose(List.of(rank(0, 7, List.of()), rank(1, 3, List.of()), rank(2, 3, List.of())), p, null)
                .rank()).isEqualTo(1);
        List<BlockHash> one = blocks(prompt(600, 7), 1, null);
        int[] q = prompt(600, 7);
        assertThat(router.choose(List.of(rank(0, 9, List.of()), rank(1, 5, one), rank(2, 5, one)), q, null))
                .isEqualTo(new RankRouter.Choice(1, 1));
    }

    @Test
    void theLastTokenNeverCountsAndTheSaltSeparatesTenants() {
        int[] exact = prompt(512, 8);                     // 2 blocks, but a hit never covers the last token
        List<BlockHash> two = blocks(exact, 2, null);
        List<RankView> ranks = List.of(rank(0, 0, List.of()), rank(1, 100, two));
        assertThat(router.choose(ranks, exact, null)).isEqualTo(new RankRouter.Choice(1, 1));
        assertThat(router.choose(ranks, exact, "tenant-b")).as("another salt hashes differently")
                .isEqualTo(new RankRouter.Choice(0, 0));
    }

    @Test
    void aRankThatIsDownIsNotChosen() {
        int[] p = prompt(600, 9);
        List<RankView> ranks = List.of(new RankView(0, false, 0, Set.copyOf(blocks(p, 2, null))), rank(1, 1_000, List.of()));
        assertThat(router.choose(ranks, p, null)).isEqualTo(new RankRouter.Choice(1, 0));
    }
}
