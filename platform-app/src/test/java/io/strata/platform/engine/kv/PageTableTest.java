package io.strata.platform.engine.kv;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A table's snapshot is what the backend reads each step: the same array while the table is unchanged, a new one
 * after any change, and never an array handed out before being written to.
 */
class PageTableTest {

    @Test
    void anUnchangedTableHandsOutTheSameSnapshot() {
        PageTable t = table(7, 9);
        int[] first = t.snapshot();
        assertThat(first).containsExactly(7, 9);
        assertThat(t.snapshot()).isSameAs(first);
    }

    @Test
    void everyChangeGivesANewSnapshotAndLeavesTheOldOneAsItWas() {
        PageTable t = table(7, 9);
        int[] before = t.snapshot();

        t.append(11);
        int[] appended = t.snapshot();
        assertThat(appended).containsExactly(7, 9, 11);

        t.dropFront(1);
        int[] dropped = t.snapshot();
        assertThat(dropped).containsExactly(9, 11);
        assertThat(t.base()).isEqualTo(1);

        t.put(5, 3);  // past the end: -1 entries between
        int[] grownBack = t.snapshot();
        assertThat(grownBack).containsExactly(9, 11, -1, -1, 3);

        t.put(0, 4);  // before the base: the table grows at the front
        int[] grownFront = t.snapshot();
        assertThat(grownFront).containsExactly(4, 9, 11, -1, -1, 3);
        assertThat(t.base()).isZero();

        t.reset(40);
        assertThat(t.snapshot()).isEmpty();

        assertThat(before).containsExactly(7, 9);
        assertThat(appended).containsExactly(7, 9, 11);
        assertThat(dropped).containsExactly(9, 11);
        assertThat(grownBack).containsExactly(9, 11, -1, -1, 3);
        assertThat(grownFront).containsExactly(4, 9, 11, -1, -1, 3);
    }

    /** A table from virtual page 0 holding these pages. */
    private static PageTable table(int... pages) {
        PageTable t = new PageTable();
        for (int p : pages) {
            t.append(p);
        }
        return t;
    }
}
