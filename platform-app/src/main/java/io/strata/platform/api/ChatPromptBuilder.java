package io.strata.platform.api;

import io.strata.platform.chat.ChatEncodingOptions;
import io.strata.platform.chat.ChatFormatException;
import io.strata.platform.chat.ChatMessage;
import io.strata.platform.chat.DeepSeekV4ChatEncoder;
import io.strata.platform.chat.ReasoningEffort;
import io.strata.platform.chat.ThinkingMode;
import io.strata.platform.chat.ToolDefinition;
import io.strata.platform.engine.InferenceEngine;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns a chat request's {@code messages}, {@code tools}, {@code reasoning_effort} and
 * {@code chat_template_kwargs} into the DeepSeek-V4 prompt. Thinking mode is on when
 * {@code chat_template_kwargs.thinking} is true, or when it is absent and {@code reasoning_effort} is set.
 */
@Component
class ChatPromptBuilder {
    private final InferenceEngine engine;
    private final ObjectMapper json;
    private final DeepSeekV4ChatEncoder encoder = new DeepSeekV4ChatEncoder();

    ChatPromptBuilder(InferenceEngine engine, ObjectMapper json) {
        this.engine = engine;
        this.json = json;
    }

    record ChatPrompt(String text, int[] ids, ThinkingMode mode, boolean toolsEnabled) {
    }

    ChatPrompt build(RequestFields f) {
        List<ChatMessage> messages = messages(f.raw("messages"));
        List<ToolDefinition> tools = tools(f);
        String toolChoice = toolChoice(f);
        boolean toolsEnabled = !tools.isEmpty() && !"none".equals(toolChoice);
        JsonNode kwargs = f.raw("chat_template_kwargs");
        if (kwargs != null && !kwargs.isObject()) {
            throw ApiException.invalid("chat_template_kwargs", "chat_template_kwargs must be an object");
        }
        String effortText = f.string("reasoning_effort", null);
        if (kwargs != null && kwargs.has("reasoning_effort") && kwargs.get("reasoning_effort").isString()) {
            effortText = kwargs.get("reasoning_effort").stringValue();
        }
        ReasoningEffort effort;
        try {
            effort = ReasoningEffort.parse(effortText);
        } catch (ChatFormatException e) {
            throw ApiException.invalid("reasoning_effort", e.getMessage());
        }
        boolean thinking = effort != null;
        if (kwargs != null && kwargs.has("thinking")) {
            if (!kwargs.get("thinking").isBoolean()) {
                throw ApiException.invalid("chat_template_kwargs.thinking", "chat_template_kwargs.thinking must be a boolean");
            }
            thinking = kwargs.get("thinking").booleanValue();
        }
        ChatEncodingOptions options = (thinking ? ChatEncodingOptions.thinking() : ChatEncodingOptions.chat())
                .withReasoningEffort(effort);
        JsonNode format = f.raw("response_format");
        if (format != null) {
            if (!format.isObject()) {
                throw ApiException.invalid("response_format", "response_format must be an object");
            }
            options = options.withResponseFormat(format);
        }
        String text;
        try {
            text = encoder.encode(messages, toolsEnabled ? tools : List.of(), options);
        } catch (ChatFormatException e) {
            throw ApiException.invalid("messages", e.getMessage());
        }
        int[] ids = engine.codec().encode(text, false);
        return new ChatPrompt(text, ids, options.mode(), toolsEnabled);
    }

    private List<ChatMessage> messages(JsonNode node) {
        if (node == null || !node.isArray() || node.isEmpty()) {
            throw ApiException.invalid("messages", "messages must be a non-empty array");
        }
        List<ChatMessage> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode m = node.get(i);
            if (!m.isObject() || !m.has("role") || !m.get("role").isString()) {
                throw ApiException.invalid("messages", "messages[" + i + "] must be an object with a string role");
            }
            try {
                out.add(json.treeToValue(m, ChatMessage.class));
            } catch (JacksonException e) {
                throw ApiException.invalid("messages", "messages[" + i + "] is malformed: " + RequestFields.problem(e));
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("messages", "messages[" + i + "] is malformed: " + e.getMessage());
            }
        }
        return out;
    }

    private List<ToolDefinition> tools(RequestFields f) {
        JsonNode node = f.raw("tools");
        if (node == null) {
            return List.of();
        }
        if (!node.isArray()) {
            throw ApiException.invalid("tools", "tools must be an array");
        }
        List<ToolDefinition> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            try {
                ToolDefinition t = json.treeToValue(node.get(i), ToolDefinition.class);
                if (t.function() == null || t.function().name() == null || t.function().name().isBlank()) {
                    throw ApiException.invalid("tools", "tools[" + i + "].function.name is required");
                }
                out.add(t);
            } catch (JacksonException e) {
                throw ApiException.invalid("tools", "tools[" + i + "] is malformed: " + RequestFields.problem(e));
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("tools", "tools[" + i + "] is malformed: " + e.getMessage());
            }
        }
        return out;
    }

    private static String toolChoice(RequestFields f) {
        JsonNode tc = f.raw("tool_choice");
        if (tc == null) {
            return "auto";
        }
        if (tc.isString()) {
            String v = tc.stringValue();
            if (!v.equals("none") && !v.equals("auto") && !v.equals("required")) {
                throw ApiException.invalid("tool_choice", "tool_choice must be none, auto, required or a function object");
            }
            return v;
        }
        if (tc.isObject()) {
            return "function";
        }
        throw ApiException.invalid("tool_choice", "tool_choice must be a string or an object");
    }
}
