package io.strata.platform.chat;

/** A rendered prompt and its token ids (BOS included once, from the text). */
public record EncodedPrompt(String text, int[] tokenIds) {
}
