package io.strata.platform.api;

import org.springframework.util.unit.DataSize;

/**
 * The largest request body the server reads into memory. A prompt of the served model's whole context
 * must fit: a token is a few bytes of text, more once JSON escapes it, about eight as a token id in an
 * array, so the default allows {@value #BYTES_PER_TOKEN} bytes per token of {@code max_model_len}, and
 * never less than {@value #FLOOR_BYTES} bytes. {@code strata.api.max-request-size} overrides it.
 *
 * @param bytes     the limit
 * @param derivedBy how it was chosen, for messages and the start-up log
 */
public record RequestSizeLimit(int bytes, String derivedBy) {
    static final int BYTES_PER_TOKEN = 16;
    static final int FLOOR_BYTES = 1024 * 1024;

    public static RequestSizeLimit of(DataSize configured, int maxModelLen) {
        if (configured != null) {
            return new RequestSizeLimit(clamp(configured.toBytes()), "strata.api.max-request-size");
        }
        long bytes = Math.max(FLOOR_BYTES, (long) BYTES_PER_TOKEN * maxModelLen);
        return new RequestSizeLimit(clamp(bytes), "the model's context of " + maxModelLen + " tokens");
    }

    private static int clamp(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("strata.api.max-request-size must be positive, got " + bytes + " bytes");
        }
        return (int) Math.min(bytes, Integer.MAX_VALUE - 8);
    }

    /** What a client reads when its body is too large. */
    public String message() {
        return "Request body is larger than " + human(bytes) + ", the limit set by " + derivedBy
                + " (strata.api.max-request-size). Send a shorter prompt.";
    }

    static String human(long bytes) {
        if (bytes >= 1024 * 1024) {
            return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
        }
        return String.format(java.util.Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
}
