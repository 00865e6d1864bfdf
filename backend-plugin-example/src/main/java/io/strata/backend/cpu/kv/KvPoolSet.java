package io.strata.backend.cpu.kv;

import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.Map;

/** The three bucket pools in host memory: one segment of {@code pages × rowBytes} per bucket. */
public final class KvPoolSet implements AutoCloseable {
    private final KvLayout layout;
    private final Arena arena = Arena.ofShared();
    private final Map<PageBucket, MemorySegment> pools = new EnumMap<>(PageBucket.class);
    private final Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);

    public KvPoolSet(KvLayout layout, Map<PageBucket, Integer> pagesPerBucket) {
        this.layout = layout;
        for (var b : layout.buckets()) {
            Integer n = pagesPerBucket.get(b.bucket());
            if (n == null || n < 0) {
                throw new IllegalArgumentException("no page count given for bucket " + b.bucket());
            }
            pools.put(b.bucket(), arena.allocate(Math.max(1, (long) n * b.rowBytes()), 64));
            pages.put(b.bucket(), n);
        }
    }

    public KvLayout layout() {
        return layout;
    }

    public MemorySegment pool(PageBucket bucket) {
        MemorySegment s = pools.get(bucket);
        if (s == null) {
            throw new IllegalArgumentException("layout has no bucket " + bucket);
        }
        return s;
    }

    public Map<PageBucket, Integer> pages() {
        return Map.copyOf(pages);
    }

    public Map<PageBucket, Long> bytes() {
        Map<PageBucket, Long> out = new EnumMap<>(PageBucket.class);
        pools.forEach((b, s) -> out.put(b, s.byteSize()));
        return out;
    }

    @Override
    public void close() {
        arena.close();
    }
}
