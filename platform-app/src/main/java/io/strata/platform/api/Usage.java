package io.strata.platform.api;

import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/** Token accounting; {@code prompt_tokens_details.cached_tokens} is always present (prefix-cache hits). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Usage(int promptTokens, int completionTokens, int totalTokens, PromptTokensDetails promptTokensDetails) {

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record PromptTokensDetails(int cachedTokens) {
    }

    public static Usage of(int prompt, int completion, int cached) {
        return new Usage(prompt, completion, prompt + completion, new PromptTokensDetails(cached));
    }
}
