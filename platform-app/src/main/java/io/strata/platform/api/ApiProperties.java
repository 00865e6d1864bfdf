package io.strata.platform.api;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the OpenAI-compatible API ({@code strata.api.*}).
 *
 * @param auth            {@code api-key} (default): /v1/**, /tokenize and /detokenize need a key;
 *                        {@code none}: open to anyone who can reach the port (logged as a warning at start)
 * @param maxLogprobs     cap on {@code logprobs}, {@code top_logprobs} and {@code prompt_logprobs} (vLLM: 20)
 * @param servedModelName name clients use in {@code model}; empty = the checkpoint folder's name
 * @param maxRequestSize  largest request body the API reads; unset = follows the served model's context
 *                        (see {@link RequestSizeLimit})
 */
@ConfigurationProperties("strata.api")
public record ApiProperties(String auth, Integer maxLogprobs, String servedModelName, DataSize maxRequestSize) {
    public ApiProperties {
        auth = auth == null || auth.isBlank() ? "api-key" : auth.trim().toLowerCase();
        maxLogprobs = maxLogprobs == null ? 20 : maxLogprobs;
        if (!auth.equals("api-key") && !auth.equals("none")) {
            throw new IllegalArgumentException("strata.api.auth must be 'api-key' or 'none', got '" + auth + "'");
        }
    }

    public boolean authDisabled() {
        return auth.equals("none");
    }
}
