package io.strata.platform.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.util.List;
import java.util.Map;

/** {@code POST /v1/completions} response and stream chunk ({@code object: "text_completion"} for both, as OpenAI). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record CompletionResponse(String id, String object, long created, String model, List<Choice> choices,
                                 Usage usage) {

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Choice(int index, String text, LogprobEntries.CompletionLogprobs logprobs, String finishReason,
                         Object stopReason,
                         @JsonInclude(JsonInclude.Include.NON_NULL) List<Map<String, LogprobEntries.PromptLogprob>> promptLogprobs) {
    }
}
