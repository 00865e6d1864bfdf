package io.strata.kv;

import java.util.List;

/**
 * A set of layers of one kind that share one block table: a page index allocated to the group holds
 * layer {@code layers.get(i)} at byte {@code i * layerPageBytes} of the page's row, so the table's size
 * does not grow with the number of layers.
 *
 * @param id     dense id, 0..groups-1, in {@link KvLayout#groups()} order
 * @param kind   the cache kind
 * @param bucket the pool its pages come from
 * @param layers model layer indices (trunk then MTP), in row order
 */
public record KindGroup(int id, CacheKind kind, PageBucket bucket, List<Integer> layers) {

    public KindGroup {
        layers = List.copyOf(layers);
    }

    /** Row slot of a model layer in this group, or -1. */
    public int slotOf(int modelLayer) {
        return layers.indexOf(modelLayer);
    }
}
