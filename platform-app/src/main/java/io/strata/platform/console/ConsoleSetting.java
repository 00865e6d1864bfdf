package io.strata.platform.console;

import java.util.Locale;
import java.util.Optional;

/**
 * The operator settings the console edits. Values are stored as text in the {@code setting} table
 * under their property names, applied at once to the running engine and request log ({@link LiveSettings}),
 * and become those properties at the next start (see {@link StoredSettingsEnvironment}), so the engine
 * reads them exactly as if they were in application.yml.
 */
public enum ConsoleSetting {
    MAX_NUM_SEQS("strata.scheduler.max-num-seqs", "Running sequences at most",
            "Sequences in one batch (vLLM --max-num-seqs).", Type.POSITIVE_INT),
    MAX_NUM_BATCHED_TOKENS("strata.scheduler.max-num-batched-tokens", "Tokens per engine step",
            "Budget of one step: prefill chunks plus one token per decoding sequence.", Type.POSITIVE_INT),
    MAX_QUEUED_REQUESTS("strata.scheduler.max-queued-requests", "Queued requests at most",
            "Choices waiting plus running beyond which new requests get 503.", Type.POSITIVE_INT),
    MAX_QUEUED_TOKENS("strata.scheduler.max-queued-tokens", "Queued prompt tokens at most",
            "Prompt tokens not yet prefilled beyond which new requests get 503.", Type.POSITIVE_INT),
    LOG_PROMPTS("strata.log-prompts", "Log prompt text",
            "Store each request's prompt in the request log (off by default: the log then holds no user content).",
            Type.BOOLEAN);

    enum Type { POSITIVE_INT, BOOLEAN }

    private final String property;
    private final String label;
    private final String help;
    private final Type type;

    ConsoleSetting(String property, String label, String help, Type type) {
        this.property = property;
        this.label = label;
        this.help = help;
        this.type = type;
    }

    public String property() {
        return property;
    }

    public String label() {
        return label;
    }

    public String help() {
        return help;
    }

    public boolean isBoolean() {
        return type == Type.BOOLEAN;
    }

    /** Form field id, e.g. {@code max-num-seqs}. */
    public String field() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Optional<ConsoleSetting> byProperty(String property) {
        for (ConsoleSetting s : values()) {
            if (s.property.equals(property)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /** The canonical text of a submitted value; throws with a message naming the setting when it is invalid. */
    public String normalize(String raw) {
        String v = raw == null ? "" : raw.trim();
        return switch (type) {
            case BOOLEAN -> switch (v.toLowerCase(Locale.ROOT)) {
                case "true", "on", "yes" -> "true";
                case "false", "off", "no", "" -> "false";
                default -> throw new IllegalArgumentException(label + " (" + property + ") must be true or false, got '" + raw + "'");
            };
            case POSITIVE_INT -> {
                long n;
                try {
                    n = Long.parseLong(v);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(label + " (" + property + ") must be a whole number, got '" + raw + "'");
                }
                long max = this == MAX_QUEUED_TOKENS ? Long.MAX_VALUE : Integer.MAX_VALUE;
                if (n < 1 || n > max) {
                    throw new IllegalArgumentException(label + " (" + property + ") must be between 1 and " + max + ", got " + n);
                }
                yield Long.toString(n);
            }
        };
    }
}
