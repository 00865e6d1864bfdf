package io.strata.platform.requestlog;

import java.time.Instant;

/**
 * One API request as it ended. Timings in milliseconds; null where the request never got that far.
 * {@code promptText} is only filled when {@code strata.log-prompts=true}.
 */
public record RequestLogEntry(String id, Instant createdAt, Long apiKeyId, String endpoint, String model,
                              Integer promptTokens, Integer cachedTokens, Integer completionTokens,
                              Long queueMs, Long ttftMs, Long totalMs, String finishReason, int httpStatus,
                              String error, String promptText) {
}
