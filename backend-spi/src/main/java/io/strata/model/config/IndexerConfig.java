package io.strata.model.config;

/**
 * The Lightning Indexer of the C4A layers.
 *
 * @param numHeads {@code index_n_heads}
 * @param headDim  {@code index_head_dim}; a power of two (Hadamard) and a multiple of 32 (FP4 blocks)
 * @param topk     compressed entries each query keeps ({@code index_topk})
 */
public record IndexerConfig(int numHeads, int headDim, int topk) {
}
