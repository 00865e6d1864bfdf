package io.strata.model.config;

/**
 * Dimensions of the attention block shared by every layer.
 *
 * @param numHeads        query heads ({@code num_attention_heads})
 * @param numKeyValueHeads always 1: one shared 512-d head is both K and V
 * @param headDim         per-head width ({@code head_dim}, 512)
 * @param ropeHeadDim     rotated channels, the LAST {@code ropeHeadDim} of each head ({@code qk_rope_head_dim})
 * @param qLoraRank       low-rank query bottleneck ({@code q_lora_rank})
 * @param oGroups         output-projection groups ({@code o_groups})
 * @param oLoraRank       per-group low rank of the output projection ({@code o_lora_rank})
 * @param slidingWindow   raw tokens every query sees, itself included ({@code sliding_window})
 * @param attentionBias   {@code attention_bias}; always false for V4
 * @param attentionDropout {@code attention_dropout}; training only
 */
public record AttentionConfig(int numHeads, int numKeyValueHeads, int headDim, int ropeHeadDim, int qLoraRank,
                              int oGroups, int oLoraRank, int slidingWindow, boolean attentionBias,
                              double attentionDropout) {

    /** Channels of a head that are not rotated (448 for V4); FP8-simulated in the KV cache. */
    public int noRopeHeadDim() {
        return headDim - ropeHeadDim;
    }

    /** Input width of one {@code wo_a} group: {@code numHeads * headDim / oGroups}. */
    public int oGroupInputDim() {
        return numHeads * headDim / oGroups;
    }
}
