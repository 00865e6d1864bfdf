package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.BucketLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.EnumMap;
import java.util.Map;

/**
 * The KV cache's three bucket pools on one device. All buckets get the same number of page indices
 * (a page index is one row in each bucket, as {@link KvLayout} defines rows), sized from the free
 * memory measured after the weights are resident: {@code pages = floor((free * fraction - reserve) /
 * sum(rowBytes))}.
 */
public final class DevicePools implements AutoCloseable {
    private final long pages;
    private final Map<PageBucket, DeviceBuffer> buffers;
    private final Map<PageBucket, Long> rowBytes;

    private DevicePools(long pages, Map<PageBucket, DeviceBuffer> buffers, Map<PageBucket, Long> rowBytes) {
        this.pages = pages;
        this.buffers = buffers;
        this.rowBytes = rowBytes;
    }

    /**
     * Page indices that fit. {@code fraction} is {@code strata.cuda.memory-fraction}: the share of the
     * measured free memory the cache may take; {@code reserveBytes} stays free for activations/workspace.
     */
    public static long pagesFor(KvLayout layout, long freeBytes, double fraction, long reserveBytes) {
        if (!(fraction > 0 && fraction <= 1)) {
            throw new IllegalArgumentException("strata.cuda.memory-fraction must be in (0, 1], got " + fraction);
        }
        long perPage = layout.buckets().stream().mapToLong(BucketLayout::rowBytes).sum();
        long budget = (long) (freeBytes * fraction) - reserveBytes;
        if (budget < perPage) {
            throw new IllegalStateException("not enough device memory for one KV page index: " + freeBytes
                    + " bytes free x " + fraction + " - reserve " + reserveBytes + " < " + perPage + " bytes per page");
        }
        return budget / perPage;
    }

    /** Measures free memory on the current device and allocates the pools. */
    public static DevicePools allocate(KvLayout layout, double fraction, long reserveBytes) {
        NativeLibrary.require();
        long[] free = new long[1];
        long[] total = new long[1];
        CudaRuntime.check(CudaNative.strata_cuda_mem_info(free, total), "cudaMemGetInfo");
        long pages = pagesFor(layout, free[0], fraction, reserveBytes);
        Map<PageBucket, DeviceBuffer> buffers = new EnumMap<>(PageBucket.class);
        Map<PageBucket, Long> rows = new EnumMap<>(PageBucket.class);
        try {
            for (BucketLayout b : layout.buckets()) {
                buffers.put(b.bucket(), DeviceBuffer.allocate(pages * b.rowBytes()));
                rows.put(b.bucket(), b.rowBytes());
            }
        } catch (RuntimeException e) {
            buffers.values().forEach(DeviceBuffer::close);
            throw e;
        }
        return new DevicePools(pages, buffers, rows);
    }

    public long pages() {
        return pages;
    }

    /** Device address of a bucket's page 0. */
    public long base(PageBucket bucket) {
        DeviceBuffer b = buffers.get(bucket);
        if (b == null) {
            throw new IllegalArgumentException("no " + bucket + " bucket in this layout");
        }
        return b.address();
    }

    public long rowBytes(PageBucket bucket) {
        return rowBytes.get(bucket);
    }

    @Override
    public void close() {
        buffers.values().forEach(DeviceBuffer::close);
    }
}
