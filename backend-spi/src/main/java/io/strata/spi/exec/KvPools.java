package io.strata.spi.exec;

import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;

import java.util.Map;

/**
 * The pools a backend allocated for a layout.
 *
 * @param layout the layout whose formats the pages hold
 * @param pages  rows per bucket
 * @param bytes  bytes per bucket actually allocated
 */
public record KvPools(KvLayout layout, Map<PageBucket, Integer> pages, Map<PageBucket, Long> bytes) {
    public KvPools {
        pages = Map.copyOf(pages);
        bytes = Map.copyOf(bytes);
    }

    public long totalBytes() {
        return bytes.values().stream().mapToLong(Long::longValue).sum();
    }
}
