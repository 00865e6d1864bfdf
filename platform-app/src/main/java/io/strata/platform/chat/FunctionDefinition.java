package io.strata.platform.chat;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.databind.JsonNode;

/** An OpenAI function tool: name, description, JSON-schema parameters, optional {@code strict}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FunctionDefinition(String name, String description, JsonNode parameters, Boolean strict) {
}
