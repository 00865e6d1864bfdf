package io.strata.platform.tokenizer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

/**
 * A model directory's Hugging Face {@code tokenizer.json}, run through DJL's binding of the Rust
 * {@code tokenizers} library, fully offline and with truncation off.
 *
 * <p>Encoding never adds special tokens on its own: DeepSeek prompts carry their BOS in the text (the
 * chat encoder writes it), and special-token strings inside the text become their ids, as with
 * {@code tokenizer.encode} in DeepSeek's reference. Thread-safe: the native tokenizer is immutable after
 * load; the per-request state lives in {@link StreamingDetokenizer}s.
 */
public final class ModelTokenizer implements AutoCloseable {

    public static final String FILE_NAME = "tokenizer.json";

    private final Path file;
    private final HuggingFaceTokenizer native_;
    private final TokenVocabulary vocabulary;

    private ModelTokenizer(Path file, HuggingFaceTokenizer native_, TokenVocabulary vocabulary) {
        this.file = file;
        this.native_ = native_;
        this.vocabulary = vocabulary;
    }

    /** Loads {@code modelDir/tokenizer.json}; DJL's native library is extracted to DJL's default cache dir. */
    public static ModelTokenizer load(Path modelDir) {
        return load(modelDir, null);
    }

    /**
     * @param modelDir    a model directory holding {@code tokenizer.json} (or the file itself)
     * @param djlCacheDir where DJL extracts its native library, or null for DJL's default; only the first
     *                    DJL use in the JVM decides it
     */
    public static ModelTokenizer load(Path modelDir, Path djlCacheDir) {
        Path file = Files.isDirectory(modelDir) ? modelDir.resolve(FILE_NAME) : modelDir;
        if (!Files.isRegularFile(file)) {
            throw new TokenizerLoadException(file + ": no such file (a model directory must contain " + FILE_NAME + ")");
        }
        TokenVocabulary vocabulary = TokenVocabulary.read(file);
        DjlEnvironment.prepare(djlCacheDir);
        HuggingFaceTokenizer hf;
        try {
            // truncation and padding off: DJL otherwise silently truncates every encoding to 512 tokens
            hf = HuggingFaceTokenizer.newInstance(file, Map.of(
                    "addSpecialTokens", "false",
                    "truncation", "false",
                    "padding", "false"));
        } catch (IOException | RuntimeException e) {
            throw new TokenizerLoadException(file + ": the tokenizers library rejected it: " + e.getMessage(), e);
        }
        return new ModelTokenizer(file, hf, vocabulary);
    }

    public Path file() {
        return file;
    }

    /** Token ids of {@code text}; adds no BOS/EOS, but special-token strings in the text map to their ids. */
    public int[] encode(String text) {
        return encode(text, false);
    }

    /**
     * Token ids of {@code text}; with {@code addSpecialTokens} the tokenizer's own post-processor may add
     * tokens (Hugging Face's {@code add_special_tokens}). DeepSeek-V4's post-processor adds none — its
     * BOS is written by the chat encoder — so both forms give the same ids for V4.
     */
    public int[] encode(String text, boolean addSpecialTokens) {
        if (text == null) {
            throw new IllegalArgumentException("text to encode is null");
        }
        Encoding encoding = native_.encode(text, addSpecialTokens, false);
        long[] ids = encoding.getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    /**
     * Text of {@code ids}. With {@code skipSpecialTokens} the special added tokens ({@code <｜User｜>},
     * BOS/EOS, {@code </think>}, {@code ｜DSML｜}, …) are left out; keep them for chat output parsing,
     * {@code /detokenize} and debugging. Ids without a token decode to nothing (as in Hugging Face).
     */
    public String decode(int[] ids, boolean skipSpecialTokens) {
        long[] longs = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] < 0) {
                throw new IllegalArgumentException("token id " + ids[i] + " at position " + i + " is negative");
            }
            longs[i] = ids[i];
        }
        return native_.decode(longs, skipSpecialTokens);
    }

    /** A detokenizer for one request's generated ids; see {@link StreamingDetokenizer}. */
    public StreamingDetokenizer newDetokenizer(boolean skipSpecialTokens) {
        if (vocabulary.isByteLevel()) {
            return new ByteLevelDetokenizer(vocabulary, skipSpecialTokens);
        }
        return new WindowedDetokenizer(ids -> decode(ids, skipSpecialTokens));
    }

    /**
     * The bytes one id stands for — for byte-level BPE possibly part of a UTF-8 character (OpenAI's logprob
     * {@code bytes}); empty for ids without a token. Other decoders: the UTF-8 of the id decoded alone.
     */
    public byte[] tokenBytes(int id) {
        if (vocabulary.isByteLevel()) {
            return vocabulary.bytes(id).clone();
        }
        return decode(new int[] {id}, false).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** One past the largest token id (added tokens included). The model's embedding may have more rows. */
    public int vocabSize() {
        return vocabulary.size();
    }

    /** Id of a token string (vocabulary entry or added token such as {@code <｜Assistant｜>}). */
    public OptionalInt tokenId(String token) {
        return vocabulary.id(token);
    }

    /** Id of a token that must exist; the error names the token and the file. */
    public int requireTokenId(String token) {
        return vocabulary.id(token).orElseThrow(() ->
                new TokenizerLoadException(file + ": has no token '" + token + "'"));
    }

    /** The token string of an id (byte-level spelling for BPE pieces), or null if no token has that id. */
    public String token(int id) {
        return vocabulary.token(id);
    }

    public boolean isSpecial(int id) {
        return vocabulary.isSpecial(id);
    }

    /** The DeepSeek-V4 control tokens of this tokenizer; fails naming the first missing one. */
    public SpecialTokens specialTokens() {
        return SpecialTokens.of(this);
    }

    @Override
    public void close() {
        native_.close();
    }
}
