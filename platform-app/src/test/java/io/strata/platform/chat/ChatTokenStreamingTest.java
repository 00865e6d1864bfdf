package io.strata.platform.chat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.platform.tokenizer.SpecialTokens;
import io.strata.platform.tokenizer.StreamingDetokenizer;
import io.strata.platform.tokenizer.TestModels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Prompt → ids with the bundled tokenizer, and the engine loop: ids → detokenizer → output parser. */
class ChatTokenStreamingTest {

    private static ModelTokenizer tokenizer;
    private static SpecialTokens special;
    private final DeepSeekV4ChatEncoder encoder = new DeepSeekV4ChatEncoder();

    @BeforeAll
    static void load() {
        tokenizer = ModelTokenizer.load(TestModels.stable());
        special = tokenizer.specialTokens();
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void promptIdsStartWithOneBosAndEndWithTheGenerationTag() {
        List<ChatMessage> messages = List.of(ChatMessage.system("sys"), ChatMessage.user("深度求索?"));
        EncodedPrompt chat = encoder.encode(messages, null, ChatEncodingOptions.chat(), tokenizer);
        assertEquals(special.bos(), chat.tokenIds()[0]);
        assertEquals(1, Arrays.stream(chat.tokenIds()).filter(id -> id == special.bos()).count());
        int n = chat.tokenIds().length;
        assertArrayEquals(new int[] {special.assistant(), special.thinkEnd()}, Arrays.copyOfRange(chat.tokenIds(), n - 2, n));
        assertEquals(chat.text(), tokenizer.decode(chat.tokenIds(), false));

        EncodedPrompt thinking = encoder.encode(messages, null, ChatEncodingOptions.thinking(), tokenizer);
        assertEquals(special.thinkStart(), thinking.tokenIds()[thinking.tokenIds().length - 1]);
    }

    @Test
    void dsmlMarkupUsesTheDsmlToken() {
        EncodedPrompt p = encoder.encode(List.of(ChatMessage.user("x"),
                        ChatMessage.assistant(null, null, List.of(ToolCall.function("i", "f", "{\"a\": 1}")))),
                null, ChatEncodingOptions.chat(), tokenizer);
        long dsml = Arrays.stream(p.tokenIds()).filter(id -> id == special.dsml()).count();
        assertEquals(6, dsml, "tool_calls, invoke, parameter — each opened and closed");
        assertEquals(special.eos(), p.tokenIds()[p.tokenIds().length - 1]);
    }

    @Test
    void generatedIdsStreamThroughDetokenizerAndParser() {
        String generated = "先想一想 🤔 then decide.</think>Calling the tool… 好的\n\n<｜DSML｜tool_calls>\n"
                + "<｜DSML｜invoke name=\"get_weather\">\n"
                + "<｜DSML｜parameter name=\"location\" string=\"true\">北京 Beijing</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n"
                + "</｜DSML｜invoke>\n</｜DSML｜tool_calls><｜end▁of▁sentence｜>";
        int[] ids = tokenizer.encode(generated);
        assertEquals(special.eos(), ids[ids.length - 1]);

        StreamingDetokenizer detokenizer = tokenizer.newDetokenizer(false);
        ChatCompletionParser parser = new ChatCompletionParser(ThinkingMode.THINKING, ids());
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        StringBuilder arguments = new StringBuilder();
        for (int id : ids) {
            ChatDelta d = parser.feed(detokenizer.next(id));
            reasoning.append(d.reasoningContent());
            content.append(d.content());
            d.toolCalls().forEach(t -> arguments.append(t.arguments()));
        }
        ChatDelta last = parser.feed(detokenizer.finish());
        assertTrue(last.isEmpty());
        parser.finish();

        ParsedCompletion whole = ChatCompletionParser.parse(generated, ThinkingMode.THINKING, ids());
        assertEquals(whole, parser.result());
        assertEquals("先想一想 🤔 then decide.", reasoning.toString());
        assertEquals("Calling the tool… 好的", content.toString());
        assertEquals("{\"location\": \"北京 Beijing\", \"days\": 3}", arguments.toString());
        assertEquals(List.of(ToolCall.function("call_0", "get_weather", "{\"location\": \"北京 Beijing\", \"days\": 3}")), whole.toolCalls());
        assertTrue(whole.endOfSequence());
    }

    private static Supplier<String> ids() {
        int[] next = {0};
        return () -> "call_" + next[0]++;
    }
}
