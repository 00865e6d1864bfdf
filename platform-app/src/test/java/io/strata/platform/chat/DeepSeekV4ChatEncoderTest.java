package io.strata.platform.chat;

import static io.strata.platform.chat.V4Golden.ASSISTANT;
import static io.strata.platform.chat.V4Golden.BOS;
import static io.strata.platform.chat.V4Golden.EOS;
import static io.strata.platform.chat.V4Golden.SYSTEM;
import static io.strata.platform.chat.V4Golden.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class DeepSeekV4ChatEncoderTest {

    private final DeepSeekV4ChatEncoder encoder = new DeepSeekV4ChatEncoder();

    private static final List<ChatMessage> CHAT = List.of(
            ChatMessage.system(SYSTEM),
            ChatMessage.user("Hello"),
            ChatMessage.assistant("Hi there! How can I help you?"),
            ChatMessage.user("What is the capital of France?"));

    private static final List<ChatMessage> THINKING = List.of(
            ChatMessage.system(SYSTEM),
            ChatMessage.user("Hello"),
            ChatMessage.assistant("Hi there! How can I help you?", "The user said hello, I should greet back.", null),
            ChatMessage.user("What is the capital of France?"),
            ChatMessage.assistant("The capital of France is Paris.", "The user asks about the capital of France. It is Paris.", null));

    @Test
    void singleUserTurnInChatMode() {
        assertEquals(BOS + USER + "Hi" + ASSISTANT + "</think>",
                encoder.encode(List.of(ChatMessage.user("Hi")), null, ChatEncodingOptions.chat()));
    }

    @Test
    void systemAndMultiTurnInChatMode() {
        assertEquals(BOS + SYSTEM
                        + USER + "Hello" + ASSISTANT + "</think>Hi there! How can I help you?" + EOS
                        + USER + "What is the capital of France?" + ASSISTANT + "</think>",
                encoder.encode(CHAT, List.of(), ChatEncodingOptions.chat()));
    }

    @Test
    void chatModeNeverRendersReasoning() {
        assertEquals(BOS + SYSTEM
                        + USER + "Hello" + ASSISTANT + "</think>Hi there! How can I help you?" + EOS
                        + USER + "What is the capital of France?" + ASSISTANT + "</think>The capital of France is Paris." + EOS,
                encoder.encode(THINKING, null, ChatEncodingOptions.chat()));
    }

    /** encoding/tests/test_output_2.txt: reasoning before the last user turn is dropped, with its think tags. */
    @Test
    void thinkingModeDropsEarlierTurnsReasoning() {
        String prompt = encoder.encode(THINKING, null, ChatEncodingOptions.thinking());
        assertEquals(BOS + SYSTEM
                + USER + "Hello" + ASSISTANT + "</think>Hi there! How can I help you?" + EOS
                + USER + "What is the capital of France?" + ASSISTANT
                + "<think>The user asks about the capital of France. It is Paris.</think>The capital of France is Paris." + EOS, prompt);
        assertFalse(prompt.contains("The user said hello"));
    }

    @Test
    void thinkingModeGenerationPromptOpensThink() {
        assertEquals(BOS + SYSTEM
                        + USER + "Hello" + ASSISTANT + "</think>Hi there! How can I help you?" + EOS
                        + USER + "What is the capital of France?" + ASSISTANT + "<think>",
                encoder.encode(THINKING.subList(0, 4), null, ChatEncodingOptions.thinking()));
    }

    @Test
    void thinkingModeKeepsReasoningWhenDroppingIsOff() {
        assertEquals(BOS + SYSTEM
                        + USER + "Hello" + ASSISTANT + "<think>The user said hello, I should greet back.</think>Hi there! How can I help you?" + EOS
                        + USER + "What is the capital of France?" + ASSISTANT + "<think>",
                encoder.encode(THINKING.subList(0, 4), null, ChatEncodingOptions.thinking().withDropThinking(false)));
    }

    @Test
    void continuesAPartialFinalAssistantMessageWithoutEos() {
        List<ChatMessage> messages = List.of(ChatMessage.user("Count to three"), ChatMessage.assistant("One, two,"));
        assertEquals(BOS + USER + "Count to three" + ASSISTANT + "</think>One, two,",
                encoder.encode(messages, null, ChatEncodingOptions.chat().withContinueFinalMessage(true)));
        assertEquals(BOS + USER + "Count to three" + ASSISTANT + "</think>One, two," + EOS,
                encoder.encode(messages, null, ChatEncodingOptions.chat()));
        ChatFormatException e = assertThrows(ChatFormatException.class, () -> encoder.encode(messages.subList(0, 1), null,
                ChatEncodingOptions.chat().withContinueFinalMessage(true)));
        assertTrue(e.getMessage().contains("continue_final_message"), e.getMessage());
    }

    @Test
    void reasoningEffortMaxPrependsTheParagraphInThinkingModeOnly() {
        List<ChatMessage> messages = List.of(ChatMessage.system(SYSTEM), ChatMessage.user("Hi"));
        assertEquals(BOS + V4Golden.EFFORT_MAX + SYSTEM + USER + "Hi" + ASSISTANT + "<think>",
                encoder.encode(messages, null, ChatEncodingOptions.thinking().withReasoningEffort(ReasoningEffort.MAX)));
        assertEquals(BOS + SYSTEM + USER + "Hi" + ASSISTANT + "<think>",
                encoder.encode(messages, null, ChatEncodingOptions.thinking().withReasoningEffort(ReasoningEffort.HIGH)));
        assertEquals(BOS + SYSTEM + USER + "Hi" + ASSISTANT + "</think>",
                encoder.encode(messages, null, ChatEncodingOptions.chat().withReasoningEffort(ReasoningEffort.MAX)));
        assertEquals(BOS + V4Golden.EFFORT_MAX + USER + "Hi" + ASSISTANT + "<think>",
                encoder.encode(List.of(ChatMessage.user("Hi")), null,
                        ChatEncodingOptions.thinking().withReasoningEffort(ReasoningEffort.parse("max"))));
        ChatFormatException e = assertThrows(ChatFormatException.class, () -> ReasoningEffort.parse("extreme"));
        assertTrue(e.getMessage().contains("reasoning_effort 'extreme'"), e.getMessage());
    }

    /** encoding/tests/test_output_1.txt: tools in the system prompt, a DSML call, its result, the answer. */
    @Test
    void toolDefinitionsCallsAndResults() {
        List<ChatMessage> messages = List.of(
                ChatMessage.system(SYSTEM),
                ChatMessage.user("What's the weather in Beijing?"),
                ChatMessage.assistant("", "The user wants to know the weather in Beijing. I should use the get_weather tool.",
                        List.of(ToolCall.function("call_1", "get_weather", "{\"location\": \"Beijing\", \"unit\": \"celsius\"}"))),
                ChatMessage.tool("call_1", "{\"temperature\": 22, \"condition\": \"sunny\", \"humidity\": 45}"),
                ChatMessage.assistant("The weather in Beijing is currently sunny with a temperature of 22°C and 45% humidity.",
                        "Got the weather data. Let me format a nice response.", null));
        String expected = BOS + SYSTEM + "\n\n" + V4Golden.toolsSection(V4Golden.WEATHER_SCHEMA)
                + USER + "What's the weather in Beijing?" + ASSISTANT
                + "<think>The user wants to know the weather in Beijing. I should use the get_weather tool.</think>\n\n"
                + "<｜DSML｜tool_calls>\n"
                + "<｜DSML｜invoke name=\"get_weather\">\n"
                + "<｜DSML｜parameter name=\"location\" string=\"true\">Beijing</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"unit\" string=\"true\">celsius</｜DSML｜parameter>\n"
                + "</｜DSML｜invoke>\n"
                + "</｜DSML｜tool_calls>" + EOS
                + USER + "<tool_result>{\"temperature\": 22, \"condition\": \"sunny\", \"humidity\": 45}</tool_result>" + ASSISTANT
                + "<think>Got the weather data. Let me format a nice response.</think>"
                + "The weather in Beijing is currently sunny with a temperature of 22°C and 45% humidity." + EOS;
        assertEquals(expected, encoder.encode(messages, V4Golden.weatherTools(), ChatEncodingOptions.thinking()));
    }

    @Test
    void toolsKeepEveryTurnsReasoning() {
        List<ChatMessage> messages = List.of(
                ChatMessage.system(SYSTEM),
                ChatMessage.user("Weather in Beijing?"),
                ChatMessage.assistant(null, "Need the tool.",
                        List.of(ToolCall.function("c1", "get_weather", "{\"location\": \"Beijing\"}"))),
                ChatMessage.tool("c1", "{\"temperature\": 22}"),
                ChatMessage.assistant("It is 22°C.", "Answer now.", null),
                ChatMessage.user("And Shanghai?"));
        assertEquals(BOS + SYSTEM + "\n\n" + V4Golden.toolsSection(V4Golden.WEATHER_SCHEMA)
                        + USER + "Weather in Beijing?" + ASSISTANT + "<think>Need the tool.</think>\n\n"
                        + "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
                        + "<｜DSML｜parameter name=\"location\" string=\"true\">Beijing</｜DSML｜parameter>\n"
                        + "</｜DSML｜invoke>\n</｜DSML｜tool_calls>" + EOS
                        + USER + "<tool_result>{\"temperature\": 22}</tool_result>" + ASSISTANT
                        + "<think>Answer now.</think>It is 22°C." + EOS
                        + USER + "And Shanghai?" + ASSISTANT + "<think>",
                encoder.encode(messages, V4Golden.weatherTools(), ChatEncodingOptions.thinking()));
    }

    @Test
    void parallelToolResultsFollowCallOrderAndShareOneUserTurn() {
        List<ChatMessage> messages = List.of(
                ChatMessage.user("Weather in Paris and Rome?"),
                ChatMessage.assistant("Checking both.", null, List.of(
                        ToolCall.function("a", "get_weather", "{\"location\": \"Paris\"}"),
                        ToolCall.function("b", "get_weather", "{\"location\": \"Rome\"}"))),
                ChatMessage.tool("b", "rome: 30"),
                ChatMessage.tool("a", "paris: 20"),
                ChatMessage.user("Which is warmer?"));
        assertEquals(BOS + "\n\n" + V4Golden.toolsSection(V4Golden.WEATHER_SCHEMA)
                        + USER + "Weather in Paris and Rome?" + ASSISTANT + "</think>Checking both.\n\n"
                        + "<｜DSML｜tool_calls>\n"
                        + "<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
                        + "<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">Rome</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
                        + "</｜DSML｜tool_calls>" + EOS
                        + USER + "<tool_result>paris: 20</tool_result>\n\n<tool_result>rome: 30</tool_result>\n\nWhich is warmer?"
                        + ASSISTANT + "</think>",
                encoder.encode(messages, V4Golden.weatherTools(), ChatEncodingOptions.chat()));
    }

    @Test
    void nonStringArgumentsAreWrittenAsPythonJson() {
        List<ChatMessage> messages = List.of(
                ChatMessage.user("go"),
                ChatMessage.assistant(null, null, List.of(ToolCall.function("x", "plan",
                        "{\"days\": 3, \"ratio\": 1.50, \"tiny\": 0.00001, \"flags\": [true, null], \"where\": {\"city\": \"Zürich\"}, \"note\": \"a \\\"b\\\"\\nc\"}"))),
                ChatMessage.tool("x", "ok"));
        String prompt = encoder.encode(messages, null, ChatEncodingOptions.chat());
        assertEquals(BOS + USER + "go" + ASSISTANT + "</think>\n\n"
                + "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"plan\">\n"
                + "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"ratio\" string=\"false\">1.5</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"tiny\" string=\"false\">1e-05</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"flags\" string=\"false\">[true, null]</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"where\" string=\"false\">{\"city\": \"Zürich\"}</｜DSML｜parameter>\n"
                + "<｜DSML｜parameter name=\"note\" string=\"true\">a \"b\"\nc</｜DSML｜parameter>\n"
                + "</｜DSML｜invoke>\n</｜DSML｜tool_calls>" + EOS
                + USER + "<tool_result>ok</tool_result>" + ASSISTANT + "</think>", prompt);
    }

    @Test
    void argumentsThatAreNotJsonBecomeOneStringParameter() {
        String prompt = encoder.encode(List.of(
                ChatMessage.user("go"),
                ChatMessage.assistant(null, null, List.of(ToolCall.function("x", "shell", "ls -la")))), null, ChatEncodingOptions.chat());
        assertTrue(prompt.contains("<｜DSML｜invoke name=\"shell\">\n<｜DSML｜parameter name=\"arguments\" string=\"true\">ls -la</｜DSML｜parameter>\n</｜DSML｜invoke>"), prompt);
    }

    @Test
    void responseFormatGoesIntoTheSystemPrompt() {
        var format = JsonMapper.shared().readTree("{\"type\": \"json_object\"}");
        assertEquals(BOS + SYSTEM + "\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n{\"type\": \"json_object\"}"
                        + USER + "Hi" + ASSISTANT + "</think>",
                encoder.encode(List.of(ChatMessage.system(SYSTEM), ChatMessage.user("Hi")), null,
                        ChatEncodingOptions.chat().withResponseFormat(format)));
    }

    @Test
    void contentPartsAreJoinedWithANewline() {
        ChatMessage parts = new ChatMessage("user", MessageContent.ofParts(List.of(ContentPart.text("line one"), ContentPart.text("line two"))),
                "alice", null, null, null);
        assertEquals(BOS + SYSTEM + USER + "line one\nline two" + ASSISTANT + "</think>",
                encoder.encode(List.of(ChatMessage.system(SYSTEM), parts), null, ChatEncodingOptions.chat()));
    }

    /** encoding_dsv4.py render_message: a developer message is a user turn of its own, not a system prompt. */
    @Test
    void developerIsAUserTurn() {
        ChatMessage developer = new ChatMessage("developer", MessageContent.of("Be brief."), null, null, null, null);
        assertEquals(BOS + SYSTEM + USER + "Be brief." + USER + "Hi" + ASSISTANT + "</think>",
                encoder.encode(List.of(ChatMessage.system(SYSTEM), developer, ChatMessage.user("Hi")), null, ChatEncodingOptions.chat()));
        // the last message: the assistant answers after it, thinking opens there in thinking mode
        assertEquals(BOS + USER + "Hi" + ASSISTANT + "</think>ok" + EOS + USER + "Be brief." + ASSISTANT + "<think>",
                encoder.encode(List.of(ChatMessage.user("Hi"), ChatMessage.assistant("ok"), developer), null, ChatEncodingOptions.thinking()));
    }

    @Test
    void thinkingModeDropsDeveloperTurnsBeforeTheLastUserTurn() {
        ChatMessage developer = new ChatMessage("developer", MessageContent.of("Be brief."), null, null, null, null);
        List<ChatMessage> conversation = List.of(ChatMessage.system(SYSTEM), developer, ChatMessage.user("Hello"),
                ChatMessage.assistant("Hi!", "greet", null), ChatMessage.user("Bye"));
        assertEquals(BOS + SYSTEM + USER + "Hello" + ASSISTANT + "</think>Hi!" + EOS + USER + "Bye" + ASSISTANT + "<think>",
                encoder.encode(conversation, null, ChatEncodingOptions.thinking()));
        // chat mode keeps it
        assertEquals(BOS + SYSTEM + USER + "Be brief." + USER + "Hello" + ASSISTANT + "</think>Hi!" + EOS + USER + "Bye" + ASSISTANT + "</think>",
                encoder.encode(conversation, null, ChatEncodingOptions.chat()));
    }

    @Test
    void badInputIsRejectedNamingTheField() {
        ChatMessage image = new ChatMessage("user", MessageContent.ofParts(List.of(ContentPart.text("see"), new ContentPart("image_url", null))),
                null, null, null, null);
        assertError("messages[1].content[1]: content part of type 'image_url'", List.of(ChatMessage.system("s"), image), null);
        assertError("messages[0].role 'function' is not supported",
                List.of(new ChatMessage("function", MessageContent.of("x"), null, null, null, null)), null);
        assertError("messages must not be empty", List.of(), null);
        assertError("messages[1].tool_calls[0].function.name is required", List.of(ChatMessage.user("u"),
                ChatMessage.assistant(null, null, List.of(ToolCall.function("i", "", "{}")))), null);
        assertError("messages[1].tool_calls[0].function.arguments must be a JSON object", List.of(ChatMessage.user("u"),
                ChatMessage.assistant(null, null, List.of(ToolCall.function("i", "f", "[1, 2]")))), null);
        assertError("tools[0].function.name is required", List.of(ChatMessage.user("u")),
                List.of(ToolDefinition.function(new FunctionDefinition(null, "d", null, null))));
        assertError("tools[0].type 'retrieval' is not supported", List.of(ChatMessage.user("u")),
                List.of(new ToolDefinition("retrieval", new FunctionDefinition("f", null, null, null))));
    }

    private void assertError(String expected, List<ChatMessage> messages, List<ToolDefinition> tools) {
        ChatFormatException e = assertThrows(ChatFormatException.class, () -> encoder.encode(messages, tools, ChatEncodingOptions.chat()));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
