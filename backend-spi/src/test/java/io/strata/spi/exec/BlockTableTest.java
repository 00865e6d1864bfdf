package io.strata.spi.exec;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlockTableTest {

    @Test
    void mapsOnlyTheVirtualPagesItCovers() {
        BlockTable t = new BlockTable(18_000, new int[] {7, -1, 42});
        assertThat(t.page(18_000)).isEqualTo(7);
        assertThat(t.page(18_001)).isEqualTo(-1);
        assertThat(t.page(18_002)).isEqualTo(42);
        assertThat(t.page(17_999)).isEqualTo(-1);
        assertThat(t.page(18_003)).isEqualTo(-1);
        assertThat(t.end()).isEqualTo(18_003);
    }

    @Test
    void aChunkLooksPagesUpThroughItsTables() {
        BlockTable[] tables = {new BlockTable(0, new int[] {3, 4}), new BlockTable(100, new int[] {9})};
        SequenceChunk c = SequenceChunk.of(1, new int[] {5}, 700, tables);
        assertThat(c.page(0, 1)).isEqualTo(4);
        assertThat(c.page(1, 100)).isEqualTo(9);
        assertThat(c.page(1, 0)).isEqualTo(-1);
        assertThat(c.page(2, 0)).as("a group the step sends no table for").isEqualTo(-1);
    }

    @Test
    void rejectsANegativeBase() {
        assertThatThrownBy(() -> new BlockTable(-1, new int[0])).isInstanceOf(IllegalArgumentException.class);
        assertThat(BlockTable.fromZero(new int[][] {{1}, {2, 3}})[1].page(1)).isEqualTo(3);
    }
}
