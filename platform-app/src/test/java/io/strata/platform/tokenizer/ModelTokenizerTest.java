package io.strata.platform.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelTokenizerTest {

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
    void loadsOfflineAndUntracked() {
        assertTrue(DjlEnvironment.isOfflineAndUntracked());
        assertEquals(TestModels.stable().resolve("tokenizer.json"), tokenizer.file());
    }

    @Test
    void vocabularySizeAndSpecialTokenIdsOfTheTinyTokenizer() {
        assertEquals(1024, tokenizer.vocabSize());
        SpecialTokens s = tokenizer.specialTokens();
        assertEquals(new SpecialTokens(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), s);
        assertEquals(0, tokenizer.requireTokenId("<｜begin▁of▁sentence｜>"));
        assertEquals("<｜Assistant｜>", tokenizer.token(3));
        assertTrue(tokenizer.isSpecial(6));
        assertFalse(tokenizer.isSpecial(14));
        assertTrue(tokenizer.tokenId("<｜no such token｜>").isEmpty());
        TokenizerLoadException e = assertThrows(TokenizerLoadException.class, () -> tokenizer.requireTokenId("<|im_start|>"));
        assertTrue(e.getMessage().contains("<|im_start|>"), e.getMessage());
    }

    @Test
    void goldenIdsForMergedPieces() {
        // 'Ġprint' (id 1021) and 'ĠĠĠĠ' are merges learned from Python source
        assertArrayEquals(new int[] {1021}, tokenizer.encode(" print"));
        assertEquals(1021, tokenizer.requireTokenId("Ġprint"));
        assertArrayEquals(new int[] {tokenizer.requireTokenId("ĠĠĠĠ")}, tokenizer.encode("    "));
        // a byte token per byte where no merge applies: '深' is E6 B7 B1
        int[] deep = tokenizer.encode("深");
        assertEquals(3, deep.length);
        assertEquals("æ", tokenizer.token(deep[0]));
    }

    @Test
    void specialTokenTextBecomesOneIdAndNoBosIsAdded() {
        String prompt = "<｜begin▁of▁sentence｜>sys<｜User｜>hi<｜Assistant｜></think>";
        int[] ids = tokenizer.encode(prompt);
        assertEquals(0, ids[0]);
        assertEquals(1, Arrays.stream(ids).filter(id -> id == 0).count(), "exactly one BOS");
        assertEquals(5, ids[ids.length - 1]);
        assertEquals(3, ids[ids.length - 2]);
        assertTrue(Arrays.stream(ids).anyMatch(id -> id == 2));
        assertFalse(tokenizer.encode("hello")[0] == 0, "plain text gets no BOS");
        assertEquals(prompt, tokenizer.decode(ids, false));
        assertEquals("syshi", tokenizer.decode(ids, true));
        int[] dsml = tokenizer.encode("<｜DSML｜tool_calls>");
        assertEquals(6, dsml[1]);
    }

    @Test
    void tokenBytesMayHoldPartOfACharacter() {
        int[] deep = tokenizer.encode("深");
        assertArrayEquals(new byte[] {(byte) 0xE6}, tokenizer.tokenBytes(deep[0]));
        assertArrayEquals(" print".getBytes(java.nio.charset.StandardCharsets.UTF_8), tokenizer.tokenBytes(1021));
        assertArrayEquals("<｜User｜>".getBytes(java.nio.charset.StandardCharsets.UTF_8), tokenizer.tokenBytes(2));
        assertEquals(0, tokenizer.tokenBytes(5000).length);
    }

    @Test
    void postProcessorAddsNoSpecialTokens() {
        assertArrayEquals(tokenizer.encode("def main():"), tokenizer.encode("def main():", true));
    }

    @Test
    void concurrentEncodingGivesTheSameIds() throws Exception {
        String[] texts = new String[64];
        int[][] expected = new int[texts.length][];
        for (int i = 0; i < texts.length; i++) {
            texts[i] = "request " + i + ": 深度求索 " + "x = y + 1\n".repeat(i);
            expected[i] = tokenizer.encode(texts[i]);
        }
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
            var futures = new java.util.ArrayList<java.util.concurrent.Future<Boolean>>();
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < texts.length; i++) {
                    int k = i;
                    futures.add(pool.submit(() -> Arrays.equals(expected[k], tokenizer.encode(texts[k]))));
                }
            }
            for (var f : futures) {
                assertTrue(f.get());
            }
        }
    }

    @Test
    void longPromptIsNotTruncated() {
        String text = "def f(x):\n    return x * 2  # 深度求索 🚀\n".repeat(120);
        int[] ids = tokenizer.encode(text);
        assertTrue(ids.length > 2000, "got " + ids.length + " ids");
        assertEquals(text, tokenizer.decode(ids, false));
    }

    @Test
    void roundTripsUnicode() {
        String text = "naïve café — 深度求索 DeepSeek-V4 12345 😀👍🏽 \t\n\u0000 end";
        assertEquals(text, tokenizer.decode(tokenizer.encode(text), true));
    }

    @Test
    void missingOrBrokenFilesFailNamingTheFile(@TempDir Path dir) throws Exception {
        TokenizerLoadException missing = assertThrows(TokenizerLoadException.class, () -> ModelTokenizer.load(dir));
        assertTrue(missing.getMessage().contains(dir.resolve("tokenizer.json").toString()), missing.getMessage());

        Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": {\"vocab\": ");
        TokenizerLoadException broken = assertThrows(TokenizerLoadException.class, () -> ModelTokenizer.load(dir));
        assertTrue(broken.getMessage().contains("not readable JSON"), broken.getMessage());

        Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0.0]]}}");
        TokenizerLoadException unigram = assertThrows(TokenizerLoadException.class, () -> ModelTokenizer.load(dir));
        assertTrue(unigram.getMessage().contains("model.vocab"), unigram.getMessage());
    }
}
