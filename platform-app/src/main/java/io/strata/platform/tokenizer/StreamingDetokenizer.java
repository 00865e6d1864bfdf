package io.strata.platform.tokenizer;

/**
 * Turns one request's generated token ids into text as they arrive. Each call returns only the text
 * that became final with that token; bytes of a character that is still incomplete (a CJK character or
 * emoji split over several byte-level tokens) are held back until the character is whole, so a returned
 * string never ends in a broken UTF-8 sequence. The concatenation of all returned strings plus
 * {@link #finish()} equals {@link ModelTokenizer#decode(int[], boolean)} of all ids.
 *
 * <p>Not thread-safe: one instance per request.
 */
public interface StreamingDetokenizer {

    /** Feeds one generated id; returns the text it completes (often empty, never null). */
    String next(int tokenId);

    /**
     * Ends the stream: returns what is still held back, with an incomplete trailing character replaced
     * by U+FFFD (as a whole-sequence decode would). Further calls return "".
     */
    String finish();

    /** Count of bytes (or, for the windowed fallback, tokens) held back and not yet returned. */
    int pending();
}
