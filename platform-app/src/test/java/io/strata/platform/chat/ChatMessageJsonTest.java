package io.strata.platform.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.json.JsonMapper;

/** The records map straight from and to OpenAI chat JSON. */
class ChatMessageJsonTest {

    private final JsonMapper json = JsonMapper.shared();

    @Test
    void readsOpenAiMessages() {
        List<ChatMessage> messages = json.readValue("""
                [
                  {"role": "system", "content": "Be terse."},
                  {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}], "name": "bob"},
                  {"role": "assistant", "content": null, "reasoning_content": "think",
                   "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]},
                  {"role": "tool", "tool_call_id": "call_9", "content": "42", "extra_field": true}
                ]""", new TypeReference<List<ChatMessage>>() { });
        assertEquals(ChatMessage.system("Be terse."), messages.get(0));
        assertEquals(new ChatMessage("user", MessageContent.ofParts(List.of(ContentPart.text("part one"), ContentPart.text("part two"))),
                "bob", null, null, null), messages.get(1));
        assertEquals(ChatMessage.assistant(null, "think", List.of(ToolCall.function("call_9", "f", "{\"a\": 1}"))), messages.get(2));
        assertEquals(ChatMessage.tool("call_9", "42"), messages.get(3));

        String prompt = new DeepSeekV4ChatEncoder().encode(messages, null, ChatEncodingOptions.chat());
        assertEquals("<｜begin▁of▁sentence｜>Be terse.<｜User｜>part one\npart two<｜Assistant｜></think>\n\n<｜DSML｜tool_calls>\n"
                + "<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
                + "</｜DSML｜tool_calls><｜end▁of▁sentence｜><｜User｜><tool_result>42</tool_result><｜Assistant｜></think>", prompt);
    }

    @Test
    void readsToolDefinitions() {
        List<ToolDefinition> tools = json.readValue("""
                [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a specific location",
                  "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The city name"},
                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}}, "required": ["location"]}}}]
                """, new TypeReference<List<ToolDefinition>>() { });
        assertEquals(V4Golden.weatherTools(), tools);
    }

    @Test
    void writesSnakeCaseWithoutNulls() {
        ChatMessage m = ChatMessage.assistant("hi", "because", List.of(ToolCall.function("c", "f", "{}")));
        assertEquals("{\"role\":\"assistant\",\"content\":\"hi\",\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\","
                + "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}],\"reasoning_content\":\"because\"}", json.writeValueAsString(m));
        ChatMessage parts = new ChatMessage("user", MessageContent.ofParts(List.of(ContentPart.text("x"))), null, null, null, null);
        assertEquals("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}", json.writeValueAsString(parts));
    }

    @Test
    void contentOfAnotherShapeIsAClearError() {
        DatabindException e = assertThrows(DatabindException.class,
                () -> json.readValue("{\"role\": \"user\", \"content\": 5}", ChatMessage.class));
        assertTrue(e.getMessage().contains("content must be a string or an array of content parts"), e.getMessage());
    }
}
