package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.DeviceBuffer;
import io.strata.backend.cuda.EntryLayout;
import io.strata.backend.cuda.FusedKernels;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.BucketLayout;
import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.EnumMap;
import java.util.Map;

/**
 * The three bucket pools in device memory, laid out exactly as {@link KvLayout} says (a page index is a
 * row of its bucket; a layer's page of a kind sits at its slot inside the row), and where each layer's
 * caches start in them.
 */
final class DeviceKvCache implements AutoCloseable {
    private final KvLayout layout;
    private final Map<PageBucket, DeviceBuffer> buffers = new EnumMap<>(PageBucket.class);
    private final Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);

    DeviceKvCache(KvLayout layout, Map<PageBucket, Integer> pagesPerBucket) {
        this.layout = layout;
        try {
            for (BucketLayout b : layout.buckets()) {
                Integer n = pagesPerBucket.get(b.bucket());
                if (n == null || n < 0) {
                    throw new IllegalArgumentException("no page count given for bucket " + b.bucket());
                }
                DeviceBuffer buf = DeviceBuffer.allocate(Math.max(1, (long) n * b.rowBytes()));
                buffers.put(b.bucket(), buf);
                pages.put(b.bucket(), n);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    KvLayout layout() {
        return layout;
    }

    Map<PageBucket, Integer> pages() {
        return Map.copyOf(pages);
    }

    Map<PageBucket, Long> bytes() {
        Map<PageBucket, Long> out = new EnumMap<>(PageBucket.class);
        buffers.forEach((b, buf) -> out.put(b, buf.bytes()));
        return out;
    }

    long totalBytes() {
        return buffers.values().stream().mapToLong(DeviceBuffer::bytes).sum();
    }

    /** The group of {@code kind} that holds {@code layer}. */
    KindGroup group(CacheKind kind, int layer) {
        for (KindGroup g : layout.kind(kind).groups()) {
            if (g.slotOf(layer) >= 0) {
                return g;
            }
        }
        throw new IllegalArgumentException("layer " + layer + " has no " + kind + " group in the layout");
    }

    /** Device address of layer {@code layer}'s page of {@code kind} in page row 0 (pages are rowBytes apart). */
    long pool(CacheKind kind, int layer) {
        KindGroup g = group(kind, layer);
        KindLayout k = layout.kind(kind);
        return buffers.get(g.bucket()).address() + (long) g.slotOf(layer) * k.layerPageBytes();
    }

    EntryLayout entries(CacheKind kind) {
        KindLayout k = layout.kind(kind);
        return EntryLayout.of(k, layout.bucket(k.bucket()).rowBytes());
    }

    FusedKernels.StatePaging statePaging(CacheKind kind) {
        KindLayout k = layout.kind(kind);
        return FusedKernels.StatePaging.of(k, layout.bucket(k.bucket()).rowBytes());
    }

    KindLayout kind(CacheKind kind) {
        return layout.kind(kind);
    }

    /**
     * Benchmarks only: fills every pool with small finite pseudo-random bytes, as if every page held a long
     * context already (decode cost does not depend on what the entries say, only that they are sane numbers).
     */
    void fillRandom(long seed) {
        for (var e : buffers.entrySet()) {
            CudaRuntime.check(CudaNative.strata_fill_random(
                e.getValue().address(), e.getValue().bytes(), seed + e.getKey().ordinal(), 0x37, 0), "fill " + e.getKey());
        }
        CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "fill");
    }

    /**
     * Benchmarks only, after {@link #fillRandom}: the block scales of group {@code g}'s entries in page rows
     * {@code rows}, every layer's page, set as the scales of real rows come out (an entry's four FP4 block scales
     * within a factor of two, 2^-7 .. 2^0), where the masked random fill spreads them over 2^-127 .. 2^-72. The
     * indexer's scores kernel takes a shorter exact form for such keys; other kinds' bytes in the rows are untouched.
     */
    void fillScales(KindGroup g, int[] rows, long seed) {
        KindLayout k = layout.kindOf(g);
        EntryLayout e = entries(g.kind());
        if (rows.length == 0) {
            return;
        }
        long rowBytes = layout.bucket(g.bucket()).rowBytes();
        try (DeviceBuffer d = DeviceBuffer.of(rows)) {
            for (int slot = 0; slot < g.layers().size(); slot++) {
                long pool = buffers.get(g.bucket()).address() + (long) slot * k.layerPageBytes();
                CudaRuntime.check(CudaNative.strata_fill_scales(pool, rowBytes, d.address(), rows.length, e.scaleBase(),
                    e.entriesPerPage() * e.scaleStride(), e.scaleStride(), seed + slot, 0), "fill scales " + g.kind());
            }
            CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "fill scales");
        }
    }

    @Override
    public void close() {
        buffers.values().forEach(DeviceBuffer::close);
        buffers.clear();
    }
}
