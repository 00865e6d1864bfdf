package io.strata.platform.engine;

/** The served model's tokenizer as the API and engine use it. */
public interface TextCodec {

    int[] encode(String text, boolean addSpecialTokens);

    String decode(int[] ids, boolean skipSpecialTokens);

    /** How one token reads on its own, for logprobs and {@code return_token_strs}. */
    String tokenText(int id);

    /** UTF-8 bytes of one token (OpenAI's logprob {@code bytes}); a token may hold part of a character. */
    byte[] tokenBytes(int id);

    /** A decoder that turns ids into text as they come, never emitting half a UTF-8 sequence. */
    IncrementalDecoder newDecoder(boolean skipSpecialTokens);

    int bosTokenId();

    int eosTokenId();

    interface IncrementalDecoder {
        /** Text completed by this token; empty while a multi-byte character is still incomplete. */
        String next(int tokenId);

        /** Whatever is still held back when the choice ends. */
        String finish();
    }
}
