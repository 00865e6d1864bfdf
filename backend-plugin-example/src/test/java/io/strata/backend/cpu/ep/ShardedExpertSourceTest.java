package io.strata.backend.cpu.ep;

import io.strata.model.checkpoint.Checkpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A rank maps the replicated tensors and its own experts, and never a byte of another rank's experts. */
class ShardedExpertSourceTest {
    private static final Path DIR = Path.of(System.getProperty("strata.models.dir"), "dsv4-tiny-fp8");

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void aRankMapsOnlyItsExpertsAndEveryReplicatedTensor(int ranks) throws Exception {
        List<ShardedExpertSource.Entry> all = ShardedExpertSource.scan(DIR);
        Set<String> names;
        try (Checkpoint ckpt = Checkpoint.open(DIR)) {
            names = new TreeSet<>(ckpt.tensors().keySet());
        }
        assertThat(all).extracting(ShardedExpertSource.Entry::name).containsExactlyInAnyOrderElementsOf(names);
        var placement = new ExpertPlacement(8, ranks);
        long replicated = all.stream().filter(e -> ShardedExpertSource.expertOf(e.name()) < 0)
            .mapToLong(ShardedExpertSource.Entry::bytes).sum();
        long experts = all.stream().filter(e -> ShardedExpertSource.expertOf(e.name()) >= 0)
            .mapToLong(ShardedExpertSource.Entry::bytes).sum();
        long[] planned = ShardedExpertSource.bytesPerRank(DIR, placement);
        long sum = 0;
        for (int r = 0; r < ranks; r++) {
            try (var src = ShardedExpertSource.open(DIR, placement, r)) {
                for (var e : all) {
                    int expert = ShardedExpertSource.expertOf(e.name());
                    boolean mine = expert < 0 || placement.holds(r, expert);
                    assertThat(src.contains(e.name())).as(e.name() + " on rank " + r).isEqualTo(mine);
                    if (!mine) {
                        // not even a mapping that covers its bytes
                        for (var run : src.mappedRuns()) {
                            boolean overlaps = run.file().equals(e.file()) && run.begin() < e.end() && e.begin() < run.end();
                            assertThat(overlaps).as(e.name() + " inside a mapping of rank " + r).isFalse();
                        }
                        assertThatThrownBy(() -> src.tensor(e.name()))
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("rank " + r + " holds experts [" + placement.first(r));
                    } else {
                        assertThat(src.tensor(e.name()).data().byteSize()).isEqualTo(e.bytes());
                    }
                }
                assertThat(src.mappedBytes()).isEqualTo(planned[r]);
                sum += src.mappedBytes();
            }
        }
        assertThat(sum).isEqualTo(experts + ranks * replicated);
    }

    @Test
    void mappedBytesAreTheCheckpointsBytes() throws Exception {
        var placement = new ExpertPlacement(8, 3);
        try (Checkpoint ckpt = Checkpoint.open(DIR); var src = ShardedExpertSource.open(DIR, placement, 1)) {
            for (String name : src.mappedTensors()) {
                var a = ckpt.tensors().get(name).segment();
                var b = src.tensor(name).data();
                assertThat(a.mismatch(b)).as(name).isEqualTo(-1L);
            }
        }
    }

    @Test
    void placementRangesAndOwners() {
        var p = new ExpertPlacement(8, 3);
        assertThat(List.of(p.first(0), p.first(1), p.first(2), p.end(2))).containsExactly(0, 2, 5, 8);
        var flash = new ExpertPlacement(256, 8);
        for (int e = 0; e < 256; e++) {
            assertThat(flash.owner(e)).isEqualTo(e / 32);
        }
        for (int experts = 1; experts <= 40; experts++) {
            for (int ranks = 1; ranks <= Math.min(experts, 9); ranks++) {
                var q = new ExpertPlacement(experts, ranks);
                for (int e = 0; e < experts; e++) {
                    int r = q.owner(e);
                    assertThat(q.holds(r, e)).isTrue();
                    assertThat(q.count(r)).isBetween(experts / ranks, experts / ranks + 1);
                }
            }
        }
        assertThatThrownBy(() -> new ExpertPlacement(3, 4)).isInstanceOf(IllegalArgumentException.class);
    }
}
