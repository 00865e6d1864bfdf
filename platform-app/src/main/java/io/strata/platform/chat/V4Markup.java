package io.strata.platform.chat;

import io.strata.platform.tokenizer.SpecialTokens;

/**
 * The literal pieces of DeepSeek-V4's chat format (v4-architecture.md §5). The two prose blocks are the
 * fixed texts of DeepSeek's {@code encoding_dsv4.py}; they are reproduced byte for byte because the model
 * was trained on exactly these prompts — they are data of the format, not code.
 */
final class V4Markup {

    private V4Markup() {
    }

    static final String BOS = SpecialTokens.BOS;
    static final String EOS = SpecialTokens.EOS;
    static final String USER = SpecialTokens.USER;
    static final String ASSISTANT = SpecialTokens.ASSISTANT;
    static final String THINK_START = SpecialTokens.THINK_START;
    static final String THINK_END = SpecialTokens.THINK_END;
    static final String DSML = SpecialTokens.DSML;

    static final String TOOL_CALLS_OPEN = "<" + DSML + "tool_calls>";
    static final String TOOL_CALLS_CLOSE = "</" + DSML + "tool_calls>";
    /** What precedes the tool-call block in an assistant turn (and separates it from the content). */
    static final String TOOL_CALLS_SEPARATOR = "\n\n";
    static final String INVOKE_OPEN = "<" + DSML + "invoke";
    static final String INVOKE_CLOSE = "</" + DSML + "invoke>";
    static final String PARAMETER_OPEN = "<" + DSML + "parameter";
    static final String PARAMETER_CLOSE = "</" + DSML + "parameter>";
    static final String TOOL_RESULT_OPEN = "<tool_result>";
    static final String TOOL_RESULT_CLOSE = "</tool_result>";

    static final String REASONING_EFFORT_MAX = """
            Reasoning Effort: Absolute maximum with no shortcuts permitted.
            You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve \
            the root cause, rigorously stress-testing your logic against all potential paths, edge cases, \
            and adversarial scenarios.
            Explicitly write out your entire deliberation process, documenting every intermediate step, \
            considered alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.

            """;

    static final String RESPONSE_FORMAT_HEADER =
            "## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n";

    /** The tools section; {@code %s} is the tool schemas, one JSON object per line. */
    static String toolsSection(String schemas) {
        return "## Tools\n\n"
                + "You have access to a set of tools to help answer the user's question. You can invoke tools by "
                + "writing a \"" + TOOL_CALLS_OPEN + "\" block like the following:\n\n"
                + TOOL_CALLS_OPEN + "\n"
                + INVOKE_OPEN + " name=\"$TOOL_NAME\">\n"
                + PARAMETER_OPEN + " name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE" + PARAMETER_CLOSE + "\n"
                + "...\n"
                + INVOKE_CLOSE + "\n"
                + INVOKE_OPEN + " name=\"$TOOL_NAME2\">\n"
                + "...\n"
                + INVOKE_CLOSE + "\n"
                + TOOL_CALLS_CLOSE + "\n\n"
                + "String parameters should be specified as is and set `string=\"true\"`. For all other types "
                + "(numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\n"
                + "If thinking_mode is enabled (triggered by " + THINK_START + "), you MUST output your complete "
                + "reasoning inside " + THINK_START + "..." + THINK_END + " BEFORE any tool calls or final response.\n\n"
                + "Otherwise, output directly after " + THINK_END + " with tool calls or final response.\n\n"
                + "### Available Tool Schemas\n\n"
                + schemas + "\n\n"
                + "You MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n";
    }
}
