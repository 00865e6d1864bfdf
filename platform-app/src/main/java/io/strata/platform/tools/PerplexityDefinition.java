package io.strata.platform.tools;

import java.util.ArrayList;
import java.util.List;

/**
 * How held-out perplexity is defined, in one place, so the trainer's figure ({@code model_card.json}), the
 * {@link HeldoutPerplexity} cross-check and the end-to-end test measure the same thing:
 * <ol>
 *   <li>the text is tokenised with the model's {@code tokenizer.json} (no special tokens added);</li>
 *   <li>it is cut into chunks; each chunk is {@link #BOS} followed by at most {@link #MAX_CHUNK}{@code - 1} text
 *       tokens when {@link #BOS_EVERY_CHUNK} (the default), else {@code [BOS] + text} is cut into consecutive
 *       slices of at most {@link #MAX_CHUNK} tokens;</li>
 *   <li>in every chunk, each token after the chunk's first is scored: its natural-log probability given
 *       the tokens before it in the chunk (the model's raw distribution: no temperature, no penalties);</li>
 *   <li>perplexity = exp(mean NLL over all scored tokens of all chunks).</li>
 * </ol>
 * With {@link #BOS_EVERY_CHUNK} every text token is scored exactly once. Adjust the constants here if the
 * trainer's definition differs (the card states it in {@code perplexity_definition}).
 */
public final class PerplexityDefinition {
    /** {@code <｜begin▁of▁sentence｜>} of the V4 tokenizers. */
    public static final int BOS = 0;
    /** Most tokens per chunk, BOS included. */
    public static final int MAX_CHUNK = 1024;
    /** Every chunk starts with BOS (true), or only the first one does (false). */
    public static final boolean BOS_EVERY_CHUNK = true;

    private PerplexityDefinition() {
    }

    /** The chunks to score for a text's token ids (the text's own tokens, without BOS). */
    public static List<int[]> chunks(int[] textTokens) {
        return chunks(textTokens, MAX_CHUNK);
    }

    static List<int[]> chunks(int[] textTokens, int maxChunk) {
        if (maxChunk < 2) {
            throw new IllegalArgumentException("a chunk needs room for BOS and one token, got " + maxChunk);
        }
        List<int[]> out = new ArrayList<>();
        if (BOS_EVERY_CHUNK) {
            for (int from = 0; from < textTokens.length; from += maxChunk - 1) {
                int n = Math.min(maxChunk - 1, textTokens.length - from);
                int[] c = new int[n + 1];
                c[0] = BOS;
                System.arraycopy(textTokens, from, c, 1, n);
                out.add(c);
            }
        } else {
            int[] all = new int[textTokens.length + 1];
            all[0] = BOS;
            System.arraycopy(textTokens, 0, all, 1, textTokens.length);
            for (int from = 0; from < all.length; from += maxChunk) {
                int n = Math.min(maxChunk, all.length - from);
                if (n >= 2) {
                    int[] c = new int[n];
                    System.arraycopy(all, from, c, 0, n);
                    out.add(c);
                }
            }
        }
        return out;
    }

    /** Scored tokens and their summed negative log-likelihood (nats). */
    public record Score(long tokens, double nllSum) {
        public static final Score NONE = new Score(0, 0);

        /** Adds one chunk's per-position logprobs; entry 0 (the chunk's first token, nothing predicts it) is skipped. */
        public Score plusChunk(double[] logprobs) {
            double sum = 0;
            for (int i = 1; i < logprobs.length; i++) {
                sum -= logprobs[i];
            }
            return new Score(tokens + Math.max(0, logprobs.length - 1), nllSum + sum);
        }

        public double meanNll() {
            return tokens == 0 ? Double.NaN : nllSum / tokens;
        }

        public double perplexity() {
            return Math.exp(meanNll());
        }
    }
}
