package io.strata.backend.cuda.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The shapes decode graphs are captured for: batches 1, 2, 4, 8 then steps of 8; contexts 8K then ×4. */
class DecodeGraphLaddersTest {
    @Test
    void theLaddersCoverTheAskedShapes() {
        assertThat(DecodeGraphs.batchLadder(256)).startsWith(1, 2, 4, 8, 16, 24).endsWith(248, 256).hasSize(35);
        assertThat(DecodeGraphs.batchLadder(20)).containsExactly(1, 2, 4, 8, 16, 20);
        assertThat(DecodeGraphs.contextLadder(131072)).containsExactly(8192, 32768, 131072);
        assertThat(DecodeGraphs.contextLadder(2048)).containsExactly(2048);
        assertThat(DecodeGraphs.contextLadder(40000)).containsExactly(8192, 32768, 40192);
    }
}
