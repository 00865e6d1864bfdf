package io.strata.platform.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class StreamingDetokenizerTest {

    private static final String MIXED = "print('深度求索') # naïve 😀👍🏽 ok\n日本語のテキスト — done ✅";
    private static ModelTokenizer tokenizer;

    @BeforeAll
    static void load() {
        tokenizer = ModelTokenizer.load(TestModels.stable());
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void byteLevelTokenizerGetsTheTableDrivenDetokenizer() {
        assertInstanceOf(ByteLevelDetokenizer.class, tokenizer.newDetokenizer(false));
    }

    @Test
    void holdsBackThePartsOfASplitCharacter() {
        int[] ids = tokenizer.encode("深");
        StreamingDetokenizer d = tokenizer.newDetokenizer(false);
        assertEquals("", d.next(ids[0]));
        assertEquals(1, d.pending());
        assertEquals("", d.next(ids[1]));
        assertEquals(2, d.pending());
        assertEquals("深", d.next(ids[2]));
        assertEquals(0, d.pending());
        assertEquals("", d.finish());
    }

    @Test
    void neverEmitsABrokenCharacter() {
        assertStreamsCleanly(tokenizer.newDetokenizer(false), tokenizer.encode(MIXED), MIXED);
    }

    @Test
    void windowedFallbackAlsoStreamsCleanly() {
        StreamingDetokenizer windowed = new WindowedDetokenizer(ids -> tokenizer.decode(ids, false));
        assertStreamsCleanly(windowed, tokenizer.encode(MIXED.repeat(5)), MIXED.repeat(5));
    }

    private static void assertStreamsCleanly(StreamingDetokenizer d, int[] ids, String expected) {
        StringBuilder all = new StringBuilder();
        boolean heldBack = false;
        for (int id : ids) {
            String piece = d.next(id);
            heldBack |= piece.isEmpty();
            assertFalse(piece.contains("\uFFFD"), "replacement char in " + piece);
            if (!piece.isEmpty()) {
                assertFalse(Character.isHighSurrogate(piece.charAt(piece.length() - 1)), "split surrogate pair");
                assertFalse(Character.isLowSurrogate(piece.charAt(0)), "split surrogate pair");
            }
            all.append(piece);
        }
        all.append(d.finish());
        assertTrue(heldBack, "the text should split characters over tokens");
        assertEquals(expected, all.toString());
    }

    @Test
    void specialTokensAreKeptOrSkipped() {
        int[] ids = tokenizer.encode("<｜Assistant｜>答</think>x<｜end▁of▁sentence｜>");
        assertEquals("<｜Assistant｜>答</think>x<｜end▁of▁sentence｜>", stream(tokenizer.newDetokenizer(false), ids));
        assertEquals("答x", stream(tokenizer.newDetokenizer(true), ids));
    }

    @Test
    void incompleteTrailingCharacterBecomesReplacementAtFinish() {
        int[] ids = tokenizer.encode("a😀");
        StreamingDetokenizer d = tokenizer.newDetokenizer(false);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < ids.length - 1; i++) {
            out.append(d.next(ids[i]));
        }
        assertEquals("a", out.toString());
        assertEquals("\uFFFD", d.finish());
    }

    /** Equals the native whole-sequence decode, including malformed byte runs from random ids. */
    @Test
    void agreesWithWholeSequenceDecodeOnRandomIds() {
        Random random = new Random(42);
        for (int trial = 0; trial < 300; trial++) {
            int[] ids = new int[1 + random.nextInt(40)];
            for (int i = 0; i < ids.length; i++) {
                // bias towards the 256 byte tokens so multi-byte characters (valid or not) are common
                ids[i] = random.nextInt(4) == 0 ? random.nextInt(tokenizer.vocabSize()) : 14 + random.nextInt(256);
            }
            for (boolean skip : new boolean[] {false, true}) {
                assertEquals(tokenizer.decode(ids, skip), stream(tokenizer.newDetokenizer(skip), ids),
                        "ids " + java.util.Arrays.toString(ids) + " skip=" + skip);
            }
        }
    }

    @Test
    void idsBeyondTheTokenizerDecodeToNothing() {
        // the model's embedding has padding rows past the tokenizer's last id
        int[] ids = {tokenizer.requireTokenId("a"), 5000, tokenizer.requireTokenId("b")};
        assertEquals("ab", stream(tokenizer.newDetokenizer(false), ids));
        assertEquals("ab", tokenizer.decode(ids, false));
        assertThrows(IllegalArgumentException.class, () -> tokenizer.decode(new int[] {3, -1}, false));
    }

    private static String stream(StreamingDetokenizer d, int[] ids) {
        StringBuilder out = new StringBuilder();
        for (int id : ids) {
            out.append(d.next(id));
        }
        return out.append(d.finish()).toString();
    }
}
