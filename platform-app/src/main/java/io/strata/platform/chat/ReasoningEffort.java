package io.strata.platform.chat;

import java.util.Locale;

/**
 * The request's {@code reasoning_effort}. DeepSeek-V4's encoder knows {@code high} and {@code max}; only
 * {@code max} changes the prompt (a fixed paragraph before the first message, thinking mode only). The
 * OpenAI levels {@code minimal}, {@code low} and {@code medium} are accepted and, like {@code high}, add
 * nothing.
 */
public enum ReasoningEffort {
    MINIMAL, LOW, MEDIUM, HIGH, MAX;

    /** Parses an API value (case-insensitive); null gives null (the default, no prefix). */
    public static ReasoningEffort parse(String value) {
        if (value == null) {
            return null;
        }
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ChatFormatException("reasoning_effort '" + value + "' is not one of minimal, low, medium, high, max");
        }
    }
}
