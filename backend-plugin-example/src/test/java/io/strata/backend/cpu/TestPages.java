package io.strata.backend.cpu;

import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.EnumMap;
import java.util.Map;

/**
 * A minimal stand-in for the engine's page allocator in tests: hands out fresh physical pages per bucket
 * and builds a request's block tables (one per kind group) covering positions {@code [0, end)}.
 */
final class TestPages {
    private final KvLayout layout;
    private final Map<PageBucket, Integer> next = new EnumMap<>(PageBucket.class);
    private final Map<PageBucket, Integer> capacity;

    TestPages(KvLayout layout, Map<PageBucket, Integer> capacity) {
        this.layout = layout;
        this.capacity = capacity;
    }

    /** Fresh tables mapping every virtual page that positions {@code [0, end)} touch. */
    int[][] tables(int end) {
        int[][] t = new int[layout.groups().size()][];
        for (KindGroup g : layout.groups()) {
            KindLayout k = layout.kindOf(g);
            int pages = (int) k.pageIndex(end - 1) + 1;
            t[g.id()] = new int[pages];
            for (int v = 0; v < pages; v++) {
                t[g.id()][v] = allocate(g.bucket());
            }
        }
        return t;
    }

    int allocate(PageBucket b) {
        int p = next.merge(b, 1, Integer::sum) - 1;
        if (p >= capacity.get(b)) {
            throw new IllegalStateException("test pool " + b + " exhausted");
        }
        return p;
    }
}
