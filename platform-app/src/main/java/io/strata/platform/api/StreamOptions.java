package io.strata.platform.api;

import tools.jackson.databind.JsonNode;

/** {@code stream_options}: only meaningful with {@code stream: true}. */
final class StreamOptions {
    private StreamOptions() {
    }

    static boolean includeUsage(RequestFields f, boolean stream) {
        JsonNode opts = f.raw("stream_options");
        if (opts == null) {
            return false;
        }
        if (!stream) {
            throw ApiException.invalid("stream_options", "stream_options is only allowed when stream is true");
        }
        if (!opts.isObject()) {
            throw ApiException.invalid("stream_options", "stream_options must be an object");
        }
        JsonNode inc = opts.get("include_usage");
        if (inc == null || inc.isNull()) {
            return false;
        }
        if (!inc.isBoolean()) {
            throw ApiException.invalid("stream_options.include_usage", "stream_options.include_usage must be a boolean");
        }
        return inc.booleanValue();
    }
}
