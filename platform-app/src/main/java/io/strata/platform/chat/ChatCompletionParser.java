package io.strata.platform.chat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits DeepSeek-V4 generated text into reasoning, answer and tool calls — incrementally, for streaming,
 * or at once with {@link #parse}. Feed it the detokenized text with special tokens kept (the markers
 * {@code </think>}, {@code ｜DSML｜} and EOS are special tokens).
 *
 * <p>The text is what follows the prompt: in thinking mode the prompt ended with {@code <think>}, so the
 * text starts with reasoning up to {@code </think>}; in chat mode it starts with the answer. The answer
 * ends at EOS or at a tool-call block:
 * <pre>
 * \n\n&lt;｜DSML｜tool_calls&gt;
 * &lt;｜DSML｜invoke name="get_weather"&gt;
 * &lt;｜DSML｜parameter name="city" string="true"&gt;Paris&lt;/｜DSML｜parameter&gt;
 * &lt;｜DSML｜parameter name="days" string="false"&gt;3&lt;/｜DSML｜parameter&gt;
 * &lt;/｜DSML｜invoke&gt;
 * &lt;/｜DSML｜tool_calls&gt;
 * </pre>
 * which becomes {@code get_weather} with arguments {@code {"city": "Paris", "days": 3}} (string
 * parameters JSON-quoted, others copied as written — DeepSeek's decoding rule). Text that could still
 * turn into a marker is held back, so a partial {@code </think>}, EOS or DSML tag never shows up as
 * content; arguments stream as JSON fragments while parameter values are generated.
 *
 * <p>One instance per response; not thread-safe.
 */
public final class ChatCompletionParser {

    private enum State { REASONING, CONTENT, TOOL_BLOCK, INVOKE, PARAMETER_VALUE, DONE }

    private static final String[] REASONING_STOPS = {V4Markup.THINK_END, V4Markup.EOS};
    private static final String[] CONTENT_STOPS = {
            V4Markup.EOS, V4Markup.TOOL_CALLS_SEPARATOR + V4Markup.TOOL_CALLS_OPEN, V4Markup.TOOL_CALLS_OPEN};
    private static final String[] VALUE_STOPS = {V4Markup.PARAMETER_CLOSE};
    private static final Pattern INVOKE_TAG = Pattern.compile(
            Pattern.quote(V4Markup.INVOKE_OPEN) + "\\s+name=\"([^\"]*)\"\\s*>");
    private static final Pattern PARAMETER_TAG = Pattern.compile(
            Pattern.quote(V4Markup.PARAMETER_OPEN) + "\\s+name=\"([^\"]*)\"\\s+string=\"(true|false)\"\\s*>");

    private final Supplier<String> toolCallIds;
    private final StringBuilder pending = new StringBuilder();
    private long pendingOffset;
    private State state;
    private boolean finished;
    private boolean endOfSequence;

    private final StringBuilder reasoning = new StringBuilder();
    private final StringBuilder content = new StringBuilder();
    private final List<CallBuilder> calls = new ArrayList<>();
    private boolean firstParameter;
    private boolean stringValue;

    private final StringBuilder deltaReasoning = new StringBuilder();
    private final StringBuilder deltaContent = new StringBuilder();
    private final List<ToolCallDelta> deltaCalls = new ArrayList<>();

    private record CallBuilder(String id, String name, StringBuilder arguments) {
    }

    public ChatCompletionParser(ThinkingMode mode) {
        this(mode, ChatCompletionParser::randomCallId);
    }

    /** @param toolCallIds gives the id of each tool call, in order (OpenAI ids look like {@code call_…}) */
    public ChatCompletionParser(ThinkingMode mode, Supplier<String> toolCallIds) {
        this.state = mode == ThinkingMode.THINKING ? State.REASONING : State.CONTENT;
        this.toolCallIds = toolCallIds;
    }

    /** Parses a whole generated text. */
    public static ParsedCompletion parse(String text, ThinkingMode mode) {
        return parse(text, mode, ChatCompletionParser::randomCallId);
    }

    public static ParsedCompletion parse(String text, ThinkingMode mode, Supplier<String> toolCallIds) {
        ChatCompletionParser parser = new ChatCompletionParser(mode, toolCallIds);
        parser.feed(text);
        parser.finish();
        return parser.result();
    }

    /** Feeds the next piece of generated text; returns what became certain with it. */
    public ChatDelta feed(String text) {
        if (finished) {
            throw new IllegalStateException("parser already finished");
        }
        if (text == null) {
            throw new IllegalArgumentException("text delta is null");
        }
        pending.append(text);
        advance(false);
        return takeDelta();
    }

    /**
     * Ends the text (EOS seen, a stop condition, or the length limit): releases held-back text. A tool
     * call cut off by the limit keeps its arguments as far as they were generated.
     */
    public ChatDelta finish() {
        if (finished) {
            return ChatDelta.EMPTY;
        }
        advance(true);
        finished = true;
        pending.setLength(0);
        return takeDelta();
    }

    /** Everything parsed so far (the final message after {@link #finish()}). */
    public ParsedCompletion result() {
        List<ToolCall> toolCalls = calls.stream()
                .map(c -> ToolCall.function(c.id, c.name, c.arguments.toString()))
                .toList();
        return new ParsedCompletion(reasoning.toString(), content.toString(), toolCalls, endOfSequence);
    }

    public static String randomCallId() {
        return "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }

    // ---- state machine -------------------------------------------------------------------------------

    private void advance(boolean end) {
        while (true) {
            switch (state) {
                case REASONING -> {
                    int stop = scan(REASONING_STOPS, end, this::emitReasoning);
                    if (stop < 0) {
                        return;
                    }
                    state = stop == 0 ? State.CONTENT : done();
                }
                case CONTENT -> {
                    int stop = scan(CONTENT_STOPS, end, this::emitContent);
                    if (stop < 0) {
                        return;
                    }
                    state = stop == 0 ? done() : State.TOOL_BLOCK;
                }
                case TOOL_BLOCK -> {
                    if (!toolBlockStep(end)) {
                        return;
                    }
                }
                case INVOKE -> {
                    if (!invokeStep(end)) {
                        return;
                    }
                }
                case PARAMETER_VALUE -> {
                    int stop = scan(VALUE_STOPS, end, this::emitValue);
                    if (stop < 0) {
                        return;
                    }
                    if (stringValue) {
                        emitArguments("\"");
                    }
                    state = State.INVOKE;
                }
                case DONE -> {
                    consume(pending.length());
                    return;
                }
            }
        }
    }

    private State done() {
        endOfSequence = true;
        return State.DONE;
    }

    /**
     * Emits text up to the first stop marker and consumes the marker, returning its index; or, with no
     * marker in sight, emits all but a tail that could still become one and returns -1.
     */
    private int scan(String[] stops, boolean end, Consumer<CharSequence> emit) {
        int best = -1;
        int at = Integer.MAX_VALUE;
        for (int i = 0; i < stops.length; i++) {
            int p = pending.indexOf(stops[i]);
            if (p >= 0 && p < at) {
                at = p;
                best = i;
            }
        }
        if (best >= 0) {
            emit.accept(pending.subSequence(0, at));
            consume(at + stops[best].length());
            return best;
        }
        int hold = end ? 0 : heldTail(stops);
        int safe = pending.length() - hold;
        if (safe > 0) {
            emit.accept(pending.subSequence(0, safe));
            consume(safe);
        }
        return -1;
    }

    /** Length of the longest tail of the pending text that is a proper prefix of one of the markers. */
    private int heldTail(String[] markers) {
        int n = pending.length();
        int best = 0;
        for (String m : markers) {
            for (int k = Math.min(n, m.length() - 1); k > best; k--) {
                if (regionMatches(n - k, m, k)) {
                    best = k;
                    break;
                }
            }
        }
        return best;
    }

    private boolean regionMatches(int from, String marker, int length) {
        for (int i = 0; i < length; i++) {
            if (pending.charAt(from + i) != marker.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Between invocations: an invoke tag or the end of the block. Returns false when more text is needed. */
    private boolean toolBlockStep(boolean end) {
        skipWhitespace();
        if (startsWith(V4Markup.TOOL_CALLS_CLOSE)) {
            consume(V4Markup.TOOL_CALLS_CLOSE.length());
            state = State.CONTENT;
            return true;
        }
        Matcher tag = completeTag(V4Markup.INVOKE_OPEN, INVOKE_TAG, end,
                V4Markup.INVOKE_OPEN + " name=\"…\">", V4Markup.TOOL_CALLS_CLOSE);
        if (tag == null) {
            return false;
        }
        String id = toolCallIds.get();
        String name = tag.group(1);
        calls.add(new CallBuilder(id, name, new StringBuilder()));
        deltaCalls.add(new ToolCallDelta(calls.size() - 1, id, name, ""));
        firstParameter = true;
        consume(tag.end());
        state = State.INVOKE;
        return true;
    }

    /** Inside an invocation: a parameter tag or the invoke's end tag. */
    private boolean invokeStep(boolean end) {
        skipWhitespace();
        if (startsWith(V4Markup.INVOKE_CLOSE)) {
            consume(V4Markup.INVOKE_CLOSE.length());
            emitArguments(firstParameter ? "{}" : "}");
            state = State.TOOL_BLOCK;
            return true;
        }
        Matcher tag = completeTag(V4Markup.PARAMETER_OPEN, PARAMETER_TAG, end,
                V4Markup.PARAMETER_OPEN + " name=\"…\" string=\"true|false\">", V4Markup.INVOKE_CLOSE);
        if (tag == null) {
            return false;
        }
        stringValue = tag.group(2).equals("true");
        emitArguments((firstParameter ? "{" : ", ") + PythonJson.string(tag.group(1)) + ": " + (stringValue ? "\"" : ""));
        firstParameter = false;
        consume(tag.end());
        state = State.PARAMETER_VALUE;
        return true;
    }

    /**
     * The opening tag at the start of the pending text once its closing {@code >} has arrived; null while
     * it (or the alternative closing tag) is still incomplete. Anything else is a syntax error.
     */
    private Matcher completeTag(String open, Pattern pattern, boolean end, String expected, String alternative) {
        if (pending.isEmpty() || isPrefixOfPending(alternative) || isPrefixOfPending(open)) {
            return null;
        }
        if (!startsWith(open)) {
            throw malformed("expected " + expected + " or " + alternative);
        }
        int close = pending.indexOf(">");
        if (close < 0) {
            return null;
        }
        Matcher m = pattern.matcher(pending.subSequence(0, close + 1));
        if (!m.matches()) {
            throw malformed("expected " + expected);
        }
        return m;
    }

    /** True when the pending text is a proper prefix of {@code tag} (so the tag may still be completing). */
    private boolean isPrefixOfPending(String tag) {
        return pending.length() < tag.length() && regionMatches(0, tag, pending.length());
    }

    private boolean startsWith(String s) {
        return pending.length() >= s.length() && regionMatches(0, s, s.length());
    }

    private void skipWhitespace() {
        int i = 0;
        while (i < pending.length() && Character.isWhitespace(pending.charAt(i))) {
            i++;
        }
        consume(i);
    }

    private void consume(int n) {
        pending.delete(0, n);
        pendingOffset += n;
    }

    private ChatOutputException malformed(String what) {
        String got = pending.length() > 60 ? pending.substring(0, 60) + "…" : pending.toString();
        return new ChatOutputException("malformed tool call at character " + pendingOffset + ": " + what
                + ", got '" + got + "'");
    }

    // ---- output --------------------------------------------------------------------------------------

    private void emitReasoning(CharSequence s) {
        reasoning.append(s);
        deltaReasoning.append(s);
    }

    private void emitContent(CharSequence s) {
        content.append(s);
        deltaContent.append(s);
    }

    private void emitValue(CharSequence s) {
        if (s.isEmpty()) {
            return;
        }
        if (stringValue) {
            StringBuilder escaped = new StringBuilder(s.length() + 8);
            PythonJson.escapeInto(s, escaped);
            emitArguments(escaped);
        } else {
            emitArguments(s);
        }
    }

    private void emitArguments(CharSequence s) {
        int index = calls.size() - 1;
        calls.get(index).arguments.append(s);
        if (!deltaCalls.isEmpty() && deltaCalls.getLast().index() == index) {
            ToolCallDelta last = deltaCalls.removeLast();
            deltaCalls.add(new ToolCallDelta(index, last.id(), last.name(), last.arguments() + s));
        } else {
            deltaCalls.add(new ToolCallDelta(index, null, null, s.toString()));
        }
    }

    private ChatDelta takeDelta() {
        if (deltaReasoning.isEmpty() && deltaContent.isEmpty() && deltaCalls.isEmpty()) {
            return ChatDelta.EMPTY;
        }
        ChatDelta d = new ChatDelta(deltaReasoning.toString(), deltaContent.toString(), deltaCalls);
        deltaReasoning.setLength(0);
        deltaContent.setLength(0);
        deltaCalls.clear();
        return d;
    }
}
