package io.strata.platform.chat;

/**
 * Whether the assistant reasons first. The prompt's last assistant tag is followed by {@code <think>}
 * (THINKING: the model writes reasoning, then {@code </think>}, then the answer) or by {@code </think>}
 * (CHAT: the model answers directly).
 */
public enum ThinkingMode {
    CHAT, THINKING
}
