package io.strata.platform.engine;

import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.platform.tokenizer.StreamingDetokenizer;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The model's tokenizer behind {@link TextCodec}. {@code addSpecialTokens} prepends BOS (DeepSeek's
 * {@code add_bos_token}), unless the text already starts with it; the tokenizer itself never adds one.
 */
public final class TokenizerCodec implements TextCodec {
    private final ModelTokenizer tokenizer;
    private final int bos;
    private final int eos;
    private final AtomicReferenceArray<String> texts;

    public TokenizerCodec(ModelTokenizer tokenizer) {
        this.tokenizer = tokenizer;
        this.bos = tokenizer.specialTokens().bos();
        this.eos = tokenizer.specialTokens().eos();
        this.texts = new AtomicReferenceArray<>(tokenizer.vocabSize());
    }

    public ModelTokenizer tokenizer() {
        return tokenizer;
    }

    @Override
    public int[] encode(String text, boolean addSpecialTokens) {
        int[] ids = tokenizer.encode(text);
        if (!addSpecialTokens || (ids.length > 0 && ids[0] == bos)) {
            return ids;
        }
        int[] out = new int[ids.length + 1];
        out[0] = bos;
        System.arraycopy(ids, 0, out, 1, ids.length);
        return out;
    }

    @Override
    public String decode(int[] ids, boolean skipSpecialTokens) {
        return tokenizer.decode(ids, skipSpecialTokens);
    }

    @Override
    public String tokenText(int id) {
        if (id < 0 || id >= texts.length()) {
            return "";
        }
        String t = texts.get(id);
        if (t == null) {
            t = tokenizer.decode(new int[]{id}, false);
            texts.set(id, t);
        }
        return t;
    }

    @Override
    public byte[] tokenBytes(int id) {
        return tokenText(id).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public IncrementalDecoder newDecoder(boolean skipSpecialTokens) {
        StreamingDetokenizer d = tokenizer.newDetokenizer(skipSpecialTokens);
        return new IncrementalDecoder() {
            @Override
            public String next(int tokenId) {
                return d.next(tokenId);
            }

            @Override
            public String finish() {
                return d.finish();
            }
        };
    }

    @Override
    public int bosTokenId() {
        return bos;
    }

    @Override
    public int eosTokenId() {
        return eos;
    }
}
