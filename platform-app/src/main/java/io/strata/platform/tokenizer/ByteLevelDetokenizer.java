package io.strata.platform.tokenizer;

/**
 * Detokenizer for byte-level BPE: looks up each id's bytes in a table and feeds them to an incremental
 * UTF-8 decoder that keeps an incomplete trailing character for the next call. Cost per token is
 * O(bytes of that token); nothing earlier is decoded again.
 */
final class ByteLevelDetokenizer implements StreamingDetokenizer {

    private final TokenVocabulary vocabulary;
    private final boolean skipSpecialTokens;
    private final LossyUtf8Decoder utf8 = new LossyUtf8Decoder();
    private final StringBuilder out = new StringBuilder();
    private boolean finished;

    ByteLevelDetokenizer(TokenVocabulary vocabulary, boolean skipSpecialTokens) {
        this.vocabulary = vocabulary;
        this.skipSpecialTokens = skipSpecialTokens;
    }

    @Override
    public String next(int tokenId) {
        if (finished) {
            throw new IllegalStateException("detokenizer already finished");
        }
        if (skipSpecialTokens && vocabulary.isSpecial(tokenId)) {
            return "";
        }
        byte[] bytes = vocabulary.bytes(tokenId);
        if (bytes.length == 0) {
            return "";
        }
        out.setLength(0);
        utf8.decode(bytes, false, out);
        return out.toString();
    }

    @Override
    public String finish() {
        if (finished) {
            return "";
        }
        finished = true;
        out.setLength(0);
        utf8.decode(new byte[0], true, out);
        return out.toString();
    }

    @Override
    public int pending() {
        return utf8.held();
    }
}
