package io.strata.platform.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.util.List;
import java.util.Map;

/** {@code POST /v1/chat/completions} response ({@code chat.completion}) and stream chunk ({@code chat.completion.chunk}). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record ChatCompletionResponse(String id, String object, long created, String model, List<Object> choices,
                                     Usage usage,
                                     @JsonInclude(JsonInclude.Include.NON_NULL) List<Map<String, LogprobEntries.PromptLogprob>> promptLogprobs) {

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Choice(int index, Message message, LogprobEntries.ChatLogprobs logprobs, String finishReason,
                         Object stopReason) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Message(String role, String content, String reasoningContent, List<ToolCallOut> toolCalls) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ChunkChoice(int index, Delta delta, LogprobEntries.ChatLogprobs logprobs, String finishReason,
                              Object stopReason) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(String role, String content, String reasoningContent, List<ToolCallOut> toolCalls) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ToolCallOut(Integer index, String id, String type, FunctionOut function) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FunctionOut(String name, String arguments) {
    }
}
