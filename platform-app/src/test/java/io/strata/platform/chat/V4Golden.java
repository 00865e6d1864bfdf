package io.strata.platform.chat;

import java.util.List;

import tools.jackson.databind.json.JsonMapper;

/**
 * Hand-written expected prompt pieces of DeepSeek-V4's format (encoding_dsv4.py and its
 * tests/test_output_*.txt), kept separate from the production constants so the tests check them.
 */
final class V4Golden {

    private V4Golden() {
    }

    static final String BOS = "<｜begin▁of▁sentence｜>";
    static final String EOS = "<｜end▁of▁sentence｜>";
    static final String USER = "<｜User｜>";
    static final String ASSISTANT = "<｜Assistant｜>";
    static final String SYSTEM = "You are a helpful assistant.";

    static final String EFFORT_MAX = "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
            + "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\n"
            + "Explicitly write out your entire deliberation process, documenting every intermediate step, considered alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n";

    static final String WEATHER_SCHEMA = "{\"name\": \"get_weather\", \"description\": \"Get the weather for a specific location\", "
            + "\"parameters\": {\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\", \"description\": \"The city name\"}, "
            + "\"unit\": {\"type\": \"string\", \"enum\": [\"celsius\", \"fahrenheit\"], \"description\": \"Temperature unit\"}}, \"required\": [\"location\"]}}";

    static String toolsSection(String schemas) {
        return """
                ## Tools

                You have access to a set of tools to help answer the user's question. You can invoke tools by writing a "<｜DSML｜tool_calls>" block like the following:

                <｜DSML｜tool_calls>
                <｜DSML｜invoke name="$TOOL_NAME">
                <｜DSML｜parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</｜DSML｜parameter>
                ...
                </｜DSML｜invoke>
                <｜DSML｜invoke name="$TOOL_NAME2">
                ...
                </｜DSML｜invoke>
                </｜DSML｜tool_calls>

                String parameters should be specified as is and set `string="true"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string="false"`.

                If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.

                Otherwise, output directly after </think> with tool calls or final response.

                ### Available Tool Schemas

                """ + schemas + "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n";
    }

    static ToolDefinition weatherTool() {
        var parameters = JsonMapper.shared().readTree("""
                {"type": "object", "properties": {"location": {"type": "string", "description": "The city name"},
                 "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}},
                 "required": ["location"]}""");
        return ToolDefinition.function(new FunctionDefinition("get_weather", "Get the weather for a specific location", parameters, null));
    }

    static List<ToolDefinition> weatherTools() {
        return List.of(weatherTool());
    }
}
