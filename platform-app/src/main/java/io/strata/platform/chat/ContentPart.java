package io.strata.platform.chat;

import com.fasterxml.jackson.annotation.JsonInclude;

/** One element of an OpenAI content array; only {@code {"type": "text", "text": …}} is supported. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ContentPart(String type, String text) {

    public static ContentPart text(String text) {
        return new ContentPart("text", text);
    }
}
