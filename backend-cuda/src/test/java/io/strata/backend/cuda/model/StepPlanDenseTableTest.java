package io.strata.backend.cuda.model;

import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compressed kind's dense block table, copied a block table at a time, holds exactly what
 * {@link SequenceChunk#page} says of every virtual page: tables that start past page 0, run past the stride or
 * stop short of it, unmapped pages inside, a group a chunk has no table for, and padding rows. No GPU needed.
 */
class StepPlanDenseTableTest {

    @Test
    void everyEntryIsThePageTheChunkMapsThere() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            int groups = 1 + rnd.nextInt(3);
            int stride = 1 + rnd.nextInt(40);
            int real = rnd.nextInt(6);
            int rows = real + rnd.nextInt(3);
            List<SequenceChunk> chunks = new ArrayList<>();
            for (int s = 0; s < real; s++) {
                BlockTable[] tables = new BlockTable[rnd.nextInt(groups + 1)];
                for (int g = 0; g < tables.length; g++) {
                    if (rnd.nextInt(5) == 0) {
                        continue;  // no table for this group
                    }
                    int[] pages = new int[rnd.nextInt(stride + 10)];
                    for (int i = 0; i < pages.length; i++) {
                        pages[i] = rnd.nextInt(4) == 0 ? -1 : rnd.nextInt(1000);
                    }
                    tables[g] = new BlockTable(rnd.nextInt(3) == 0 ? rnd.nextInt(stride + 5) : 0, pages);
                }
                chunks.add(new SequenceChunk(s, new int[] {1}, 100, tables, 0, 0, new int[] {0}));
            }
            for (int g = 0; g < groups; g++) {
                int[] table = StepPlan.Builder.denseTable(chunks, rows, g, stride);
                assertThat(table).hasSize(rows * stride);
                for (int s = 0; s < rows; s++) {
                    for (int v = 0; v < stride; v++) {
                        int expected = s < real ? chunks.get(s).page(g, v) : -1;
                        assertThat(table[s * stride + v]).as("trial %d, group %d, row %d, page %d", trial, g, s, v)
                            .isEqualTo(expected);
                    }
                }
            }
        }
    }
}
