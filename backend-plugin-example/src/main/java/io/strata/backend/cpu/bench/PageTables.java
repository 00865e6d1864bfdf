package io.strata.backend.cpu.bench;

import io.strata.spi.exec.BlockTable;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.EnumMap;
import java.util.Map;

/**
 * The simplest page assignment for a benchmark: every virtual page a sequence of {@code positions}
 * touches gets its own physical page (no window release, no sharing). The engine's cache manager does
 * the real bookkeeping.
 */
final class PageTables {
    private PageTables() {
    }

    /** Pages each bucket needs for {@code sequences} sequences of {@code positions}. */
    static Map<PageBucket, Integer> pagesNeeded(KvLayout layout, int positions, int sequences) {
        Map<PageBucket, Integer> need = new EnumMap<>(PageBucket.class);
        for (var b : layout.buckets()) {
            need.put(b.bucket(), 0);
        }
        for (KindGroup g : layout.groups()) {
            int pages = (int) layout.kindOf(g).pageIndex(positions - 1) + 1;
            need.merge(g.bucket(), pages * sequences, Integer::sum);
        }
        return need;
    }

    /** Block tables for sequence {@code index} of {@code positions}, pages laid out sequence after sequence. */
    static BlockTable[] tables(KvLayout layout, int positions, int index) {
        Map<PageBucket, Integer> next = new EnumMap<>(PageBucket.class);
        Map<PageBucket, Integer> before = pagesNeeded(layout, positions, index);
        int[][] t = new int[layout.groups().size()][];
        for (KindGroup g : layout.groups()) {
            int pages = (int) layout.kindOf(g).pageIndex(positions - 1) + 1;
            t[g.id()] = new int[pages];
            for (int v = 0; v < pages; v++) {
                t[g.id()][v] = before.get(g.bucket()) + next.merge(g.bucket(), 1, Integer::sum) - 1;
            }
        }
        return BlockTable.fromZero(t);
    }
}
