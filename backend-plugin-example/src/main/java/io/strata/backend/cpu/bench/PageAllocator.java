package io.strata.backend.cpu.bench;

import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.EnumMap;
import java.util.Map;

/**
 * A minimal stand-in for the engine's page allocator in tests and benchmarks: hands out fresh physical pages
 * per bucket (deterministically, so two executors driven alike see the same tables) and builds a request's
 * block tables, one per kind group, covering positions {@code [0, end)}.
 */
public final class PageAllocator {
    private final KvLayout layout;
    private final Map<PageBucket, Integer> next = new EnumMap<>(PageBucket.class);
    private final Map<PageBucket, Integer> capacity;

    /** @param capacity pages of each bucket's pool */
    public PageAllocator(KvLayout layout, Map<PageBucket, Integer> capacity) {
        this.layout = layout;
        this.capacity = capacity;
    }

    /** Pages each bucket needs for {@code sequences} sequences of {@code positions} (no window release, no sharing). */
    public static Map<PageBucket, Integer> pagesNeeded(KvLayout layout, int positions, int sequences) {
        return pagesNeeded(layout, positions, sequences, 0);
    }

    /**
     * Pages each bucket needs for {@code sequences} sequences of {@code positions} when window kinds (the
     * sliding window, compressor states) map only what positions from {@code windowFrom} on touch, as
     * {@link #tables(int, int)} does.
     */
    public static Map<PageBucket, Integer> pagesNeeded(KvLayout layout, int positions, int sequences, int windowFrom) {
        Map<PageBucket, Integer> need = new EnumMap<>(PageBucket.class);
        for (var b : layout.buckets()) {
            need.put(b.bucket(), 0);
        }
        for (KindGroup g : layout.groups()) {
            KindLayout k = layout.kindOf(g);
            int last = (int) k.pageIndex(positions - 1);
            int first = g.kind().compressed() ? 0 : (int) k.pageIndex(Math.max(0, windowFrom));
            need.merge(g.bucket(), (last - first + 1) * sequences, Integer::sum);
        }
        return need;
    }

    /**
     * Fresh tables for positions {@code [0, end)} whose window kinds map only the pages of positions from
     * {@code windowFrom} on (-1 below): what a request decoding past {@code windowFrom} still reads, as the
     * engine keeps it after releasing the rest of the window.
     */
    public int[][] tables(int end, int windowFrom) {
        int[][] t = new int[layout.groups().size()][];
        for (KindGroup g : layout.groups()) {
            KindLayout k = layout.kindOf(g);
            int pages = (int) k.pageIndex(end - 1) + 1;
            int first = g.kind().compressed() ? 0 : (int) k.pageIndex(Math.max(0, windowFrom));
            t[g.id()] = new int[pages];
            for (int v = 0; v < pages; v++) {
                t[g.id()][v] = v < first ? -1 : allocate(g.bucket());
            }
        }
        return t;
    }

    /** Fresh tables mapping every virtual page that positions {@code [0, end)} touch. */
    public int[][] tables(int end) {
        return tables(end, 0);
    }

    /**
     * {@code tables} with {@code first}'s compressed pages below {@code hit} shared, and with {@code windows}
     * also its window/state pages of the last window before {@code hit}: what a prefix-cache hit hands over.
     */
    public int[][] sharing(int[][] tables, int[][] first, int hit, boolean windows) {
        for (KindGroup g : layout.groups()) {
            KindLayout k = layout.kindOf(g);
            if (k.kind().compressed()) {
                for (int v = 0; v < k.pageIndex(hit - 1) + 1; v++) {
                    tables[g.id()][v] = first[g.id()][v];
                }
            } else if (windows) {
                long lo = k.window().windowStart(hit);
                for (long v = k.pageIndex(Math.max(0, lo)); lo < hit && v <= k.pageIndex(hit - 1); v++) {
                    tables[g.id()][(int) v] = first[g.id()][(int) v];
                }
            }
        }
        return tables;
    }

    public int allocate(PageBucket b) {
        int p = next.merge(b, 1, Integer::sum) - 1;
        if (p >= capacity.get(b)) {
            throw new IllegalStateException("test pool " + b + " exhausted");
        }
        return p;
    }
}
