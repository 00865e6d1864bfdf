package io.strata.platform.chat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.strata.platform.tokenizer.ModelTokenizer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Renders an OpenAI-style conversation into DeepSeek-V4's prompt format (there is no Jinja template for
 * V4; this follows DeepSeek's {@code encoding_dsv4.py}, v4-architecture.md §5):
 * <pre>
 * BOS [effort paragraph] system [\n\n tools section] [\n\n response format]
 * &lt;｜User｜&gt;user text&lt;｜Assistant｜&gt;&lt;/think&gt;answer EOS            (chat mode, or an earlier turn)
 * &lt;｜User｜&gt;user text&lt;｜Assistant｜&gt;&lt;think&gt;reasoning&lt;/think&gt;answer EOS  (thinking mode)
 * </pre>
 * Tool calls follow the answer as a {@code <｜DSML｜tool_calls>} block; tool results go into the next user
 * turn as {@code <tool_result>…</tool_result>} (consecutive user/tool messages form one user turn, joined
 * by blank lines, tool results in the order of the calls).
 *
 * <p>Mapping choices where OpenAI and DeepSeek differ: request-level {@code tools} and
 * {@code response_format} are rendered into the first message when it is a system message, else into an
 * empty system message put first; text parts of a content array are joined with a newline (tool results with a blank line); {@code name} is not rendered
 * (V4 has no place for it). A {@code developer} message is rendered as the reference renders it: a user
 * turn of its own ({@code <｜User｜>} + content), counted as a user turn when finding the last one, and in
 * thinking mode dropped, like earlier reasoning, when it comes before the last user turn. Stateless and
 * thread-safe.
 */
public final class DeepSeekV4ChatEncoder {

    private static final JsonMapper JSON = JsonMapper.shared();

    /** The prompt text, starting with BOS and (for a conversation ending in a user/tool turn) ending with the generation tag. */
    public String encode(List<ChatMessage> messages, List<ToolDefinition> tools, ChatEncodingOptions options) {
        List<Turn> turns = merge(messages);
        String toolsText = tools == null || tools.isEmpty() ? null : renderTools(tools);
        String formatText = options.responseFormat() == null || options.responseFormat().isNull() ? null
                : V4Markup.RESPONSE_FORMAT_HEADER + PythonJson.dumps(options.responseFormat());
        if (toolsText != null || formatText != null) {
            attachToSystem(turns, toolsText, formatText);
        }
        sortToolResultsByCallOrder(turns);

        if (options.continueFinalMessage() && !(turns.getLast() instanceof AssistantTurn)) {
            throw new ChatFormatException("continue_final_message needs the last message to be an assistant message");
        }
        boolean thinking = options.mode() == ThinkingMode.THINKING;
        boolean dropThinking = options.dropThinking() && toolsText == null;
        if (thinking && dropThinking) {
            dropEarlierDeveloperTurns(turns);
        }
        int lastUser = lastUserIndex(turns);

        StringBuilder out = new StringBuilder(V4Markup.BOS);
        for (int i = 0; i < turns.size(); i++) {
            if (i == 0 && thinking && options.reasoningEffort() == ReasoningEffort.MAX) {
                out.append(V4Markup.REASONING_EFFORT_MAX);
            }
            Turn turn = turns.get(i);
            switch (turn) {
                case SystemTurn s -> {
                    out.append(s.content);
                    if (s.tools != null) {
                        out.append("\n\n").append(s.tools);
                    }
                    if (s.responseFormat != null) {
                        out.append("\n\n").append(s.responseFormat);
                    }
                }
                case UserTurn u -> renderUser(u, out);
                case DeveloperTurn d -> out.append(V4Markup.USER).append(d.content);
                case AssistantTurn a -> {
                    // earlier turns' reasoning is dropped (not even </think>) unless dropping is off
                    if (thinking && (!dropThinking || i > lastUser)) {
                        out.append(a.reasoning).append(V4Markup.THINK_END);
                    }
                    out.append(a.content);
                    if (!a.toolCalls.isEmpty()) {
                        out.append(V4Markup.TOOL_CALLS_SEPARATOR);
                        renderToolCalls(a, out);
                    }
                    if (!(options.continueFinalMessage() && i == turns.size() - 1)) {
                        out.append(V4Markup.EOS);
                    }
                }
            }
            boolean nextIsAssistant = i + 1 < turns.size() && turns.get(i + 1) instanceof AssistantTurn;
            if (turn.isUser() && (i + 1 == turns.size() || nextIsAssistant)) {
                out.append(V4Markup.ASSISTANT);
                boolean opensThinking = thinking && (!dropThinking || i >= lastUser);
                out.append(opensThinking ? V4Markup.THINK_START : V4Markup.THINK_END);
            }
        }
        return out.toString();
    }

    /** The prompt and its token ids; the BOS comes from the text, so the ids start with exactly one BOS. */
    public EncodedPrompt encode(List<ChatMessage> messages, List<ToolDefinition> tools, ChatEncodingOptions options,
                                ModelTokenizer tokenizer) {
        String text = encode(messages, tools, options);
        return new EncodedPrompt(text, tokenizer.encode(text));
    }

    // ---- conversation → turns ------------------------------------------------------------------------

    private sealed interface Turn permits SystemTurn, UserTurn, DeveloperTurn, AssistantTurn {
        /** Whether the model sees this turn as the user's (the assistant answers after it). */
        default boolean isUser() {
            return false;
        }
    }

    private static final class SystemTurn implements Turn {
        final String content;
        String tools;
        String responseFormat;

        SystemTurn(String content) {
            this.content = content;
        }
    }

    private record Block(String text, String toolCallId, boolean toolResult) {
    }

    private static final class UserTurn implements Turn {
        final List<Block> blocks = new ArrayList<>();

        @Override
        public boolean isUser() {
            return true;
        }
    }

    private record DeveloperTurn(String content) implements Turn {
        @Override
        public boolean isUser() {
            return true;
        }
    }

    private record AssistantTurn(String content, String reasoning, List<ToolCall> toolCalls, String where) implements Turn {
    }

    private static List<Turn> merge(List<ChatMessage> messages) {
        if (messages == null || messages.isEmpty()) {
            throw new ChatFormatException("messages must not be empty");
        }
        List<Turn> turns = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            String where = "messages[" + i + "]";
            if (m == null || m.role() == null) {
                throw new ChatFormatException(where + ".role is required");
            }
            switch (m.role()) {
                case "system" -> turns.add(new SystemTurn(text(m, where, "\n")));
                case "developer" -> turns.add(new DeveloperTurn(text(m, where, "\n")));
                case "user" -> userTurn(turns).blocks.add(new Block(text(m, where, "\n"), null, false));
                case "tool" -> userTurn(turns).blocks.add(new Block(text(m, where, "\n\n"), m.toolCallId(), true));
                case "assistant" -> {
                    List<ToolCall> calls = m.toolCalls() == null ? List.of() : m.toolCalls();
                    for (int j = 0; j < calls.size(); j++) {
                        FunctionCall f = calls.get(j) == null ? null : calls.get(j).function();
                        if (f == null || f.name() == null || f.name().isEmpty()) {
                            throw new ChatFormatException(where + ".tool_calls[" + j + "].function.name is required");
                        }
                    }
                    String reasoning = m.reasoningContent() == null ? "" : m.reasoningContent();
                    turns.add(new AssistantTurn(text(m, where, "\n"), reasoning, calls, where));
                }
                default -> throw new ChatFormatException(where + ".role '" + m.role()
                        + "' is not supported; expected system, developer, user, assistant or tool");
            }
        }
        return turns;
    }

    private static String text(ChatMessage m, String where, String partSeparator) {
        return m.content() == null ? "" : m.content().joinedText(partSeparator, where + ".content");
    }

    /** Consecutive user and tool messages make one user turn (V4 has no tool role). */
    private static UserTurn userTurn(List<Turn> turns) {
        if (!turns.isEmpty() && turns.getLast() instanceof UserTurn u) {
            return u;
        }
        UserTurn u = new UserTurn();
        turns.add(u);
        return u;
    }

    private static void attachToSystem(List<Turn> turns, String tools, String responseFormat) {
        SystemTurn system;
        if (turns.getFirst() instanceof SystemTurn first) {
            system = first;
        } else {
            system = new SystemTurn("");
            turns.addFirst(system);
        }
        system.tools = tools;
        system.responseFormat = responseFormat;
    }

    /** Tool results of one user turn follow the order of the calls of the assistant turn before it. */
    private static void sortToolResultsByCallOrder(List<Turn> turns) {
        Map<String, Integer> callOrder = Map.of();
        for (Turn t : turns) {
            if (t instanceof AssistantTurn a && !a.toolCalls.isEmpty()) {
                Map<String, Integer> order = new HashMap<>();
                for (int i = 0; i < a.toolCalls.size(); i++) {
                    String id = a.toolCalls.get(i).id();
                    if (id != null && !id.isEmpty()) {
                        order.putIfAbsent(id, i);
                    }
                }
                callOrder = order;
            } else if (t instanceof UserTurn u && !callOrder.isEmpty()) {
                List<Block> results = u.blocks.stream().filter(Block::toolResult).toList();
                if (results.size() > 1) {
                    Map<String, Integer> order = callOrder;
                    List<Block> sorted = new ArrayList<>(results);
                    // stable: results without a known id keep their relative order at position 0
                    sorted.sort(Comparator.comparingInt(b -> b.toolCallId() == null ? 0 : order.getOrDefault(b.toolCallId(), 0)));
                    int next = 0;
                    for (int i = 0; i < u.blocks.size(); i++) {
                        if (u.blocks.get(i).toolResult()) {
                            u.blocks.set(i, sorted.get(next++));
                        }
                    }
                }
            }
        }
    }

    /** Thinking mode keeps only the developer turns from the last user turn on, as the reference does. */
    private static void dropEarlierDeveloperTurns(List<Turn> turns) {
        int lastUser = lastUserIndex(turns);
        for (int i = lastUser - 1; i >= 0; i--) {
            if (turns.get(i) instanceof DeveloperTurn) {
                turns.remove(i);
            }
        }
    }

    private static int lastUserIndex(List<Turn> turns) {
        for (int i = turns.size() - 1; i >= 0; i--) {
            if (turns.get(i).isUser()) {
                return i;
            }
        }
        return -1;
    }

    // ---- rendering -----------------------------------------------------------------------------------

    private static void renderUser(UserTurn u, StringBuilder out) {
        out.append(V4Markup.USER);
        for (int i = 0; i < u.blocks.size(); i++) {
            if (i > 0) {
                out.append("\n\n");
            }
            Block b = u.blocks.get(i);
            if (b.toolResult()) {
                out.append(V4Markup.TOOL_RESULT_OPEN).append(b.text()).append(V4Markup.TOOL_RESULT_CLOSE);
            } else {
                out.append(b.text());
            }
        }
    }

    private static String renderTools(List<ToolDefinition> tools) {
        StringBuilder schemas = new StringBuilder();
        for (int i = 0; i < tools.size(); i++) {
            ToolDefinition t = tools.get(i);
            String where = "tools[" + i + "]";
            if (t == null || t.function() == null) {
                throw new ChatFormatException(where + ".function is required");
            }
            if (t.type() != null && !t.type().equals("function")) {
                throw new ChatFormatException(where + ".type '" + t.type() + "' is not supported; only 'function'");
            }
            FunctionDefinition f = t.function();
            if (f.name() == null || f.name().isEmpty()) {
                throw new ChatFormatException(where + ".function.name is required");
            }
            ObjectNode node = JSON.createObjectNode();
            node.put("name", f.name());
            if (f.description() != null) {
                node.put("description", f.description());
            }
            if (f.parameters() != null) {
                node.set("parameters", f.parameters());
            }
            if (f.strict() != null) {
                node.put("strict", f.strict());
            }
            if (i > 0) {
                schemas.append('\n');
            }
            schemas.append(PythonJson.dumps(node));
        }
        return V4Markup.toolsSection(schemas.toString());
    }

    private static void renderToolCalls(AssistantTurn a, StringBuilder out) {
        out.append(V4Markup.TOOL_CALLS_OPEN).append('\n');
        for (int j = 0; j < a.toolCalls.size(); j++) {
            FunctionCall f = a.toolCalls.get(j).function();
            if (j > 0) {
                out.append('\n');
            }
            out.append(V4Markup.INVOKE_OPEN).append(" name=\"").append(f.name()).append("\">\n");
            JsonNode args = arguments(f.arguments(), a.where + ".tool_calls[" + j + "].function.arguments");
            boolean first = true;
            for (Map.Entry<String, JsonNode> e : args.properties()) {
                if (!first) {
                    out.append('\n');
                }
                first = false;
                boolean isString = e.getValue().isString();
                out.append(V4Markup.PARAMETER_OPEN).append(" name=\"").append(e.getKey())
                        .append("\" string=\"").append(isString).append("\">")
                        .append(isString ? e.getValue().asString() : PythonJson.dumps(e.getValue()))
                        .append(V4Markup.PARAMETER_CLOSE);
            }
            out.append('\n').append(V4Markup.INVOKE_CLOSE);
        }
        out.append('\n').append(V4Markup.TOOL_CALLS_CLOSE);
    }

    /** Arguments as a JSON object; text that is not JSON becomes one string parameter "arguments", as in the reference. */
    private static JsonNode arguments(String arguments, String where) {
        if (arguments == null || arguments.isBlank()) {
            return JSON.createObjectNode();
        }
        JsonNode parsed;
        try {
            parsed = JSON.readTree(arguments);
        } catch (JacksonException notJson) {
            return JSON.createObjectNode().put("arguments", arguments);
        }
        if (!parsed.isObject()) {
            throw new ChatFormatException(where + " must be a JSON object, not " + parsed.getNodeType());
        }
        return parsed;
    }
}
