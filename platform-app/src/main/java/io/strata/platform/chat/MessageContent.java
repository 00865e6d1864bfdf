package io.strata.platform.chat;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import tools.jackson.databind.JsonNode;

/**
 * OpenAI message content: either a plain string or an array of parts. Exactly one of {@code text} and
 * {@code parts} is non-null; JSON maps to and from the same two shapes.
 */
public record MessageContent(String text, List<ContentPart> parts) {

    public MessageContent {
        if ((text == null) == (parts == null)) {
            throw new IllegalArgumentException("content is either a string or an array of parts");
        }
        parts = parts == null ? null : List.copyOf(parts);
    }

    public static MessageContent of(String text) {
        return new MessageContent(text, null);
    }

    public static MessageContent ofParts(List<ContentPart> parts) {
        return new MessageContent(null, parts);
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static MessageContent fromJson(JsonNode node) {
        if (node.isString()) {
            return of(node.asString());
        }
        if (node.isArray()) {
            List<ContentPart> parts = new ArrayList<>();
            for (JsonNode p : node) {
                if (p.isString()) {
                    parts.add(ContentPart.text(p.asString()));
                } else {
                    parts.add(new ContentPart(p.path("type").asString(null), p.path("text").asString(null)));
                }
            }
            return ofParts(parts);
        }
        throw new ChatFormatException("content must be a string or an array of content parts, not " + node.getNodeType());
    }

    @JsonValue
    Object toJson() {
        return text != null ? text : parts;
    }

    /**
     * The text, with text parts joined by {@code separator}; {@code where} names the field in errors,
     * e.g. {@code messages[2].content}.
     */
    public String joinedText(String separator, String where) {
        if (text != null) {
            return text;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            ContentPart p = parts.get(i);
            if (!"text".equals(p.type()) || p.text() == null) {
                throw new ChatFormatException(where + "[" + i + "]: content part of type '" + p.type()
                        + "' is not supported (DeepSeek-V4 takes text parts only)");
            }
            if (i > 0) {
                out.append(separator);
            }
            out.append(p.text());
        }
        return out.toString();
    }
}
