package io.strata.platform.chat;

import static io.strata.platform.chat.V4Golden.EOS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class ChatCompletionParserTest {

    private static final String WEATHER_CALL = "\n\n<｜DSML｜tool_calls>\n"
            + "<｜DSML｜invoke name=\"get_weather\">\n"
            + "<｜DSML｜parameter name=\"location\" string=\"true\">Beijing</｜DSML｜parameter>\n"
            + "<｜DSML｜parameter name=\"unit\" string=\"true\">celsius</｜DSML｜parameter>\n"
            + "</｜DSML｜invoke>\n"
            + "</｜DSML｜tool_calls>" + EOS;

    private static final String TWO_CALLS = "Let me check.\n\n<｜DSML｜tool_calls>\n"
            + "<｜DSML｜invoke name=\"plan\">\n"
            + "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n"
            + "<｜DSML｜parameter name=\"opts\" string=\"false\">{\"a\": [1, 2.5]}</｜DSML｜parameter>\n"
            + "<｜DSML｜parameter name=\"note\" string=\"true\">say \"hi\"\n\tnow </think> ok</｜DSML｜parameter>\n"
            + "</｜DSML｜invoke>\n"
            + "<｜DSML｜invoke name=\"ping\">\n\n</｜DSML｜invoke>\n"
            + "</｜DSML｜tool_calls>" + EOS;

    /** Every output shape: thinking/chat × with/without tools, cut off, text after EOS, CJK. */
    private static final List<Case> CASES = List.of(
            new Case(ThinkingMode.THINKING, "The user greets.</think>Hello! 你好 😀" + EOS,
                    "The user greets.", "Hello! 你好 😀", List.of(), true),
            new Case(ThinkingMode.CHAT, "Paris is the capital.\n\nIt is in France." + EOS,
                    "", "Paris is the capital.\n\nIt is in France.", List.of(), true),
            new Case(ThinkingMode.THINKING,
                    "The user wants to know the weather in Beijing. I should use the get_weather tool.</think>" + WEATHER_CALL,
                    "The user wants to know the weather in Beijing. I should use the get_weather tool.", "",
                    List.of(ToolCall.function("call_0", "get_weather", "{\"location\": \"Beijing\", \"unit\": \"celsius\"}")), true),
            new Case(ThinkingMode.CHAT, TWO_CALLS, "", "Let me check.", List.of(
                    ToolCall.function("call_0", "plan", "{\"days\": 3, \"opts\": {\"a\": [1, 2.5]}, \"note\": \"say \\\"hi\\\"\\n\\tnow </think> ok\"}"),
                    ToolCall.function("call_1", "ping", "{}")), true),
            new Case(ThinkingMode.THINKING, "still thinking when the length limit hit <｜Us",
                    "still thinking when the length limit hit <｜Us", "", List.of(), false),
            new Case(ThinkingMode.CHAT, "done" + EOS + "garbage after the end</think>",
                    "", "done", List.of(), true),
            new Case(ThinkingMode.CHAT, "a\n\n\n<｜DSML｜tool_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"x\" string=\"true\">1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>",
                    "", "a\n", List.of(ToolCall.function("call_0", "f", "{\"x\": \"1\"}")), false),
            new Case(ThinkingMode.CHAT, "cut in a call\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"q\" string=\"true\">partial val",
                    "", "cut in a call", List.of(ToolCall.function("call_0", "f", "{\"q\": \"partial val")), false),
            new Case(ThinkingMode.CHAT, "a < b and </thin is not a tag; <｜end of> neither" + EOS,
                    "", "a < b and </thin is not a tag; <｜end of> neither", List.of(), true));

    private record Case(ThinkingMode mode, String text, String reasoning, String content, List<ToolCall> calls, boolean eos) {
    }

    private static Supplier<String> sequentialIds() {
        int[] next = {0};
        return () -> "call_" + next[0]++;
    }

    @Test
    void parsesEachOutputShapeAtOnce() {
        for (Case c : CASES) {
            ParsedCompletion p = ChatCompletionParser.parse(c.text, c.mode, sequentialIds());
            assertEquals(new ParsedCompletion(c.reasoning, c.content, c.calls, c.eos), p, c.text);
        }
    }

    @Test
    void toolArgumentsAreValidJson() {
        ParsedCompletion p = ChatCompletionParser.parse(TWO_CALLS, ThinkingMode.CHAT);
        var args = JsonMapper.shared().readTree(p.toolCalls().get(0).function().arguments());
        assertEquals(3, args.get("days").asInt());
        assertEquals("say \"hi\"\n\tnow </think> ok", args.get("note").asString());
        assertTrue(p.toolCalls().get(0).id().startsWith("call_"));
        assertFalse(p.toolCalls().get(0).id().equals(p.toolCalls().get(1).id()));
    }

    /** Split the text in two at every character position: the deltas add up to the whole-text result. */
    @Test
    void incrementalParseSplitAtEveryPosition() {
        for (Case c : CASES) {
            for (int cut = 0; cut <= c.text.length(); cut++) {
                assertStreamedEqualsWhole(c, List.of(c.text.substring(0, cut), c.text.substring(cut)));
            }
        }
    }

    /** One character per feed: the hardest case for held-back markers. */
    @Test
    void incrementalParseCharacterByCharacter() {
        for (Case c : CASES) {
            List<String> chunks = new ArrayList<>();
            c.text.codePoints().forEach(cp -> chunks.add(Character.toString(cp)));
            assertStreamedEqualsWhole(c, chunks);
        }
    }

    private static void assertStreamedEqualsWhole(Case c, List<String> chunks) {
        ChatCompletionParser parser = new ChatCompletionParser(c.mode, sequentialIds());
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<String> ids = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<StringBuilder> args = new ArrayList<>();
        List<ChatDelta> deltas = new ArrayList<>();
        for (String chunk : chunks) {
            deltas.add(parser.feed(chunk));
        }
        deltas.add(parser.finish());
        for (ChatDelta d : deltas) {
            reasoning.append(d.reasoningContent());
            content.append(d.content());
            for (ToolCallDelta t : d.toolCalls()) {
                if (t.index() == ids.size()) {
                    assertNotNull(t.id(), "first piece of a call carries its id");
                    ids.add(t.id());
                    names.add(t.name());
                    args.add(new StringBuilder());
                } else {
                    assertNull(t.id(), "later pieces carry no id");
                    assertNull(t.name());
                }
                args.get(t.index()).append(t.arguments());
            }
        }
        List<ToolCall> streamedCalls = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            streamedCalls.add(ToolCall.function(ids.get(i), names.get(i), args.get(i).toString()));
        }
        String where = c.text + " split " + chunks.size();
        // a partial marker emitted as text would make these differ from the whole-text result
        assertEquals(c.reasoning, reasoning.toString(), where);
        assertEquals(c.content, content.toString(), where);
        assertEquals(c.calls, streamedCalls, where);
        assertEquals(new ParsedCompletion(c.reasoning, c.content, c.calls, c.eos), parser.result(), where);
    }

    @Test
    void holdsBackOnlyWhatCouldBeAMarker() {
        ChatCompletionParser thinking = new ChatCompletionParser(ThinkingMode.THINKING);
        assertEquals(new ChatDelta("abc", "", List.of()), thinking.feed("abc</thi"));
        assertEquals(new ChatDelta("", "x", List.of()), thinking.feed("nk>x"));
        assertEquals(new ChatDelta("", "<｜end", List.of()), thinking.feed("<｜end<"));
        assertEquals(new ChatDelta("", "<", List.of()), thinking.finish());

        ChatCompletionParser chat = new ChatCompletionParser(ThinkingMode.CHAT, sequentialIds());
        assertEquals(new ChatDelta("", "Hi", List.of()), chat.feed("Hi\n"));
        assertEquals(ChatDelta.EMPTY, chat.feed("\n<｜DSML｜tool_c"));
        assertEquals(new ChatDelta("", "", List.of(new ToolCallDelta(0, "call_0", "f", "{\"k\": \"v"))),
                chat.feed("alls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"k\" string=\"true\">v</｜DSML｜para"));
        assertEquals(new ChatDelta("", "", List.of(new ToolCallDelta(0, null, null, "\"}"))),
                chat.feed("meter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>" + EOS));
        assertTrue(chat.result().endOfSequence());
        assertThrows(IllegalStateException.class, () -> {
            chat.finish();
            chat.feed("more");
        });
    }

    @Test
    void malformedToolCallsFailWithPosition() {
        ChatOutputException e = assertThrows(ChatOutputException.class, () -> ChatCompletionParser.parse(
                "x\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke nam=\"f\">\n", ThinkingMode.CHAT));
        assertTrue(e.getMessage().contains("at character 22"), e.getMessage());
        assertTrue(e.getMessage().contains("name="), e.getMessage());
        ChatOutputException e2 = assertThrows(ChatOutputException.class, () -> ChatCompletionParser.parse(
                "<｜DSML｜tool_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"a\" string=\"maybe\">1</｜DSML｜parameter>",
                ThinkingMode.CHAT));
        assertTrue(e2.getMessage().contains("string=\"true|false\""), e2.getMessage());
        ChatOutputException e3 = assertThrows(ChatOutputException.class, () -> ChatCompletionParser.parse(
                "<｜DSML｜tool_calls>hello", ThinkingMode.CHAT));
        assertTrue(e3.getMessage().contains("got 'hello'"), e3.getMessage());
    }

    /** What the encoder writes for an assistant turn, the parser reads back. */
    @Test
    void encoderOutputParsesBack() {
        List<ToolCall> calls = List.of(
                ToolCall.function("a", "search", "{\"query\": \"深度求索 V4\", \"limit\": 5, \"filters\": {\"lang\": [\"zh\", \"en\"]}, \"exact\": false}"),
                ToolCall.function("b", "noop", "{}"));
        String prompt = new DeepSeekV4ChatEncoder().encode(List.of(
                ChatMessage.user("find it"),
                ChatMessage.assistant("Searching.", "Need a search.", calls)), null, ChatEncodingOptions.thinking().withDropThinking(false));
        String generated = prompt.substring(prompt.indexOf("<｜Assistant｜><think>") + "<｜Assistant｜><think>".length());
        ParsedCompletion p = ChatCompletionParser.parse(generated, ThinkingMode.THINKING, sequentialIds());
        assertEquals("Need a search.", p.reasoningContent());
        assertEquals("Searching.", p.content());
        assertEquals(2, p.toolCalls().size());
        var mapper = JsonMapper.shared();
        for (int i = 0; i < 2; i++) {
            assertEquals(calls.get(i).function().name(), p.toolCalls().get(i).function().name());
            assertEquals(mapper.readTree(calls.get(i).function().arguments()), mapper.readTree(p.toolCalls().get(i).function().arguments()));
        }
        assertEquals(new ChatMessage("assistant", MessageContent.of("Searching."), null, p.toolCalls(), null, "Need a search."), p.toMessage());
    }
}
