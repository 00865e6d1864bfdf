package io.strata.spi.exec;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StepResultTest {
    private static final BlockTable[] NO_TABLES = new BlockTable[0];

    private static SequenceChunk chunk(long id, int tokens, int[] rows, boolean argmaxOnly) {
        return new SequenceChunk(id, new int[tokens], 0, NO_TABLES, 0, 0, rows, argmaxOnly);
    }

    private static int argmax(float... row) {
        return StepResult.argmax(MemorySegment.ofArray(row), 0, row.length);
    }

    @Test
    void argmaxIsTheFirstLargestWithNaNWinningOnlyAtIndexZero() {
        assertThat(argmax(1f, 3f, 2f, 3f)).as("ties keep the first").isEqualTo(1);
        assertThat(argmax(-0f, 0f, -1f)).as("-0 and +0 tie").isEqualTo(0);
        assertThat(argmax(0f, -0f)).isEqualTo(0);
        assertThat(argmax(1f, Float.NaN, 2f, Float.NaN)).as("a NaN after index 0 never wins").isEqualTo(2);
        assertThat(argmax(Float.NaN, 5f, 7f)).as("nothing compares greater than a NaN at index 0").isEqualTo(0);
        float ninf = Float.NEGATIVE_INFINITY;
        assertThat(argmax(ninf, ninf, ninf)).isEqualTo(0);
        assertThat(argmax(ninf, Float.NaN, -3e38f, Float.POSITIVE_INFINITY, Float.POSITIVE_INFINITY)).isEqualTo(3);
        // an offset row inside a longer segment
        assertThat(StepResult.argmax(MemorySegment.ofArray(new float[]{9, 9, 1, 4, 2}), 2, 3)).isEqualTo(1);
    }

    @Test
    void aHostBackendsRowsOfArgmaxOnlyChunksComeBackAsTokensTheRestPackedInOrder() {
        int vocab = 4;
        // chunk 0: two rows whole; chunk 1: one argmax row; chunk 2: no rows; chunk 3: one whole row; chunk 4: argmax
        StepBatch batch = new StepBatch(List.of(chunk(1, 5, new int[]{1, 4}, false), chunk(2, 1, new int[]{0}, true),
            chunk(3, 3, new int[0], false), chunk(4, 1, new int[]{0}, false), chunk(5, 2, new int[]{1}, true)));
        float[] all = {
            0, 1, 2, 3,      // row 0
            4, 5, 6, 7,      // row 1
            1, 9, 9, 0,      // row 2, argmax 1
            8, 8, 8, 8,      // row 3
            -1, -2, -0.5f, -3 // row 4, argmax 2
        };
        StepResult r = StepResult.of(all, vocab, batch, 11);
        assertThat(r.rows()).isEqualTo(5);
        assertThat(r.rowStart()).containsExactly(0, 2, 3, 3, 4, 5);
        assertThat(r.tokens()).containsExactly(-1, -1, 1, -1, 2);
        assertThat(r.rowOffsets()).containsExactly(0, 4, -1, 8, -1);
        assertThat(r.logits().byteSize()).isEqualTo(3 * 4 * vocab);
        assertThat(r.row(0, 1)).containsExactly(4, 5, 6, 7);
        assertThat(r.row(3, 0)).containsExactly(8, 8, 8, 8);
        assertThat(r.logit(3, 2)).isEqualTo(8);
        assertThatThrownBy(() -> r.row(1, 0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("row 2 came back as its token 1");
    }

    @Test
    void withNoArgmaxChunkEveryRowIsLogitsAndNothingIsCopied() {
        float[] all = {3, 1, 2, 0, 0, 5};
        StepBatch batch = new StepBatch(List.of(chunk(1, 2, new int[]{0, 1}, false)));
        StepResult r = StepResult.of(all, 3, batch, 0);
        assertThat(r.tokens()).containsExactly(-1, -1);
        assertThat(r.logits().heapBase()).as("the caller's array, not a copy").containsSame(all);
    }

    @Test
    void logitsMustBeExactlyTheRowsTheTokensLeaveOpen() {
        MemorySegment two = MemorySegment.ofArray(new float[8]);
        assertThatThrownBy(() -> new StepResult(two, 4, new int[]{0, 2}, new int[]{3, 3, -1}, 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not the 1 rows");
        assertThatThrownBy(() -> new StepResult(two, 4, new int[]{0, 3}, new int[]{-1, -1, 4}, 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token 4 outside");
        assertThat(new StepResult(two, 4, new int[]{0, 3}, new int[]{-1, 0, -1}, 0).rowOffsets())
            .containsExactly(0, -1, 4);
        assertThat(new StepResult(two, 4, new int[]{0, 2}, 0).tokens()).containsExactly(-1, -1);
    }
}
