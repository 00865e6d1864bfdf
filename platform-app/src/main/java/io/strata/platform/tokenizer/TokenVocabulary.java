package io.strata.platform.tokenizer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The id ↔ token tables of a Hugging Face {@code tokenizer.json}, read once at load: token strings,
 * which ids are special added tokens, and — for byte-level BPE — the bytes each id decodes to, which is
 * what lets {@link StreamingDetokenizer} work in O(1) per token instead of re-decoding text.
 */
final class TokenVocabulary {

    private final String[] tokens;
    private final BitSet special;
    private final Map<String, Integer> ids;
    private final byte[][] bytes;

    private TokenVocabulary(String[] tokens, BitSet special, Map<String, Integer> ids, byte[][] bytes) {
        this.tokens = tokens;
        this.special = special;
        this.ids = ids;
        this.bytes = bytes;
    }

    static TokenVocabulary read(Path tokenizerJson) {
        JsonNode root;
        try (var in = Files.newInputStream(tokenizerJson)) {
            root = JsonMapper.shared().readTree(in);
        } catch (IOException | JacksonException e) {
            throw new TokenizerLoadException(tokenizerJson + ": not readable JSON: " + e.getMessage(), e);
        }
        JsonNode model = root.path("model");
        JsonNode vocab = model.path("vocab");
        if (!vocab.isObject()) {
            throw new TokenizerLoadException(tokenizerJson + ": model.vocab is missing or not an object (model type '"
                    + model.path("type").asString("?") + "'; only token→id vocabularies such as BPE are supported)");
        }
        Map<String, Integer> ids = new HashMap<>();
        int size = 0;
        for (Map.Entry<String, JsonNode> e : vocab.properties()) {
            int id = requireId(tokenizerJson, "model.vocab['" + e.getKey() + "']", e.getValue());
            ids.put(e.getKey(), id);
            size = Math.max(size, id + 1);
        }
        BitSet special = new BitSet();
        Map<Integer, String> added = new HashMap<>();
        for (JsonNode t : root.path("added_tokens")) {
            int id = requireId(tokenizerJson, "added_tokens[].id", t.path("id"));
            String content = t.path("content").asString(null);
            if (content == null) {
                throw new TokenizerLoadException(tokenizerJson + ": added token " + id + " has no 'content'");
            }
            added.put(id, content);
            ids.put(content, id);
            if (t.path("special").asBoolean(false)) {
                special.set(id);
            }
            size = Math.max(size, id + 1);
        }
        String[] tokens = new String[size];
        for (Map.Entry<String, Integer> e : ids.entrySet()) {
            tokens[e.getValue()] = e.getKey();
        }
        added.forEach((id, content) -> tokens[id] = content);

        byte[][] bytes = null;
        if (isByteLevel(root.path("decoder"))) {
            ByteLevelAlphabet alphabet = new ByteLevelAlphabet();
            bytes = new byte[size][];
            for (int id = 0; id < size; id++) {
                bytes[id] = tokens[id] == null ? new byte[0] : alphabet.bytesOf(tokens[id]);
            }
        }
        return new TokenVocabulary(tokens, special, Map.copyOf(ids), bytes);
    }

    private static int requireId(Path file, String where, JsonNode node) {
        if (!node.isIntegralNumber() || node.asLong() < 0 || node.asLong() > Integer.MAX_VALUE - 1) {
            throw new TokenizerLoadException(file + ": " + where + " is not a valid token id: " + node);
        }
        return node.asInt();
    }

    private static boolean isByteLevel(JsonNode decoder) {
        String type = decoder.path("type").asString("");
        if (type.equals("ByteLevel")) {
            return true;
        }
        if (type.equals("Sequence")) {
            JsonNode parts = decoder.path("decoders");
            if (parts.isEmpty()) {
                return false;
            }
            for (JsonNode d : parts) {
                if (!d.path("type").asString("").equals("ByteLevel")) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    int size() {
        return tokens.length;
    }

    OptionalInt id(String token) {
        Integer id = ids.get(token);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** The token string, or null for an id inside the range that no token uses. */
    String token(int id) {
        return id >= 0 && id < tokens.length ? tokens[id] : null;
    }

    boolean isSpecial(int id) {
        return id >= 0 && special.get(id);
    }

    boolean isByteLevel() {
        return bytes != null;
    }

    /** Bytes of one id; ids without a token (the model's padding rows) decode to nothing, as in HF. */
    byte[] bytes(int id) {
        if (bytes == null) {
            throw new IllegalStateException("this tokenizer's decoder is not byte-level");
        }
        return id >= 0 && id < bytes.length ? bytes[id] : EMPTY;
    }

    private static final byte[] EMPTY = new byte[0];
}
