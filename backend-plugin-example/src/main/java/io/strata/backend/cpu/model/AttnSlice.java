package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.LayerCache;

/**
 * One sequence's rows inside a batched attention call.
 *
 * @param row   index of the sequence's first row in the batch
 * @param span  where those rows sit in the sequence
 * @param cache that sequence's cache for this layer
 */
public record AttnSlice(int row, ChunkSpan span, LayerCache cache) {
}
