package io.strata.kv;

import io.strata.model.config.ModelConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * What the KV layout needs to know about a model: the per-layer compress ratios (trunk then MTP) and the
 * head widths. Derived from a {@link ModelConfig}; also constructible directly for what-if shapes such as
 * the blog's "V4 with 30 C4A + 31 C128A layers".
 *
 * @param modelId        identifier mixed into prefix-cache hashes
 * @param ratios         compress ratio of every layer that has attention (0, 4 or 128), MTP blocks included
 * @param headDim        width of the shared K=V head (512)
 * @param ropeHeadDim    rotated channels at the end of the head (64)
 * @param indexerHeadDim width of one indexer key (128)
 * @param slidingWindow  raw window every layer keeps (128)
 */
public record KvModelShape(String modelId, List<Integer> ratios, int headDim, int ropeHeadDim, int indexerHeadDim,
                           int slidingWindow) {

    public KvModelShape {
        ratios = List.copyOf(ratios);
        for (int i = 0; i < ratios.size(); i++) {
            int r = ratios.get(i);
            if (r != 0 && r != 4 && r != 128) {
                throw new IllegalArgumentException("layer " + i + ": compress ratio " + r + " is not 0, 4 or 128");
            }
        }
        if (headDim <= ropeHeadDim || ropeHeadDim < 0) {
            throw new IllegalArgumentException("head_dim " + headDim + " must exceed rope dim " + ropeHeadDim);
        }
        if (slidingWindow <= 0 || indexerHeadDim <= 0) {
            throw new IllegalArgumentException("sliding_window and index_head_dim must be positive");
        }
    }

    /** The shape of a parsed V4 config; every trunk layer and MTP block is included. */
    public static KvModelShape of(String modelId, ModelConfig config) {
        return new KvModelShape(modelId, config.compressRatios(), config.attention().headDim(),
                config.attention().ropeHeadDim(), config.indexer().headDim(), config.attention().slidingWindow());
    }

    /** A V4-style stack of {@code c4} ratio-4 then {@code c128} ratio-128 layers with V4 widths. */
    public static KvModelShape synthetic(String modelId, int c4, int c128) {
        List<Integer> r = new ArrayList<>();
        for (int i = 0; i < c4; i++) {
            r.add(4);
        }
        for (int i = 0; i < c128; i++) {
            r.add(128);
        }
        return new KvModelShape(modelId, r, 512, 64, 128, 128);
    }

    /** Layer indices with the given ratio. */
    public List<Integer> layersWithRatio(int ratio) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < ratios.size(); i++) {
            if (ratios.get(i) == ratio) {
                out.add(i);
            }
        }
        return out;
    }

    /** Every layer (all of them carry a sliding window). */
    public List<Integer> allLayers() {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < ratios.size(); i++) {
            out.add(i);
        }
        return out;
    }

    /** The layers that hold caches of a kind. */
    public List<Integer> layersOf(CacheKind kind) {
        return switch (kind) {
            case C4A_KV, C4_INDEXER_K, C4_STATE, C4_INDEXER_STATE -> layersWithRatio(4);
            case C128A_KV, C128_STATE -> layersWithRatio(128);
            case SWA_KV -> allLayers();
        };
    }
}
