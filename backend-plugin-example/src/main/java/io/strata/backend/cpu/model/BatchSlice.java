package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.LayerCache;

import java.util.function.IntFunction;

/**
 * One sequence's rows inside a batched forward pass.
 *
 * @param row    index of the sequence's first row in the batch
 * @param span   where those rows sit in the sequence
 * @param caches the sequence's cache per layer
 */
public record BatchSlice(int row, ChunkSpan span, IntFunction<LayerCache> caches) {
}
