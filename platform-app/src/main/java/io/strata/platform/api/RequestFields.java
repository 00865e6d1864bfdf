package io.strata.platform.api;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;

/**
 * Typed, validating access to a JSON request body. Every failure names the field, so a client sees
 * which parameter was wrong (OpenAI's {@code param}).
 */
final class RequestFields {
    private final JsonNode body;

    RequestFields(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid(null, "Request body must be a JSON object");
        }
        this.body = body;
    }

    /** Parses a request body; an empty body or invalid JSON is a 400 saying so. */
    static RequestFields parse(ObjectMapper json, String body) {
        if (body == null || body.isBlank()) {
            throw ApiException.invalid(null, "Request body is empty; expected a JSON object");
        }
        try {
            return new RequestFields(json.readTree(body));
        } catch (JacksonException e) {
            throw ApiException.invalid(null, "Request body is not valid JSON: " + problem(e));
        }
    }

    /**
     * What Jackson found wrong, for a person: its message without the parser's internals (Jackson appends
     * a redacted source and byte offsets), plus the line and column or the field path where known.
     */
    static String problem(JacksonException e) {
        StringBuilder out = new StringBuilder(e.getOriginalMessage());
        if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
            out.append(" (line ").append(e.getLocation().getLineNr()).append(", column ").append(e.getLocation().getColumnNr()).append(')');
        } else if (!e.getPath().isEmpty()) {
            out.append(" (at ").append(e.getPathReference()).append(')');
        }
        return out.toString();
    }

    /** {@code n}: how many choices to generate, 1 by default, at most 128. */
    int choiceCount() {
        int n = integer("n", 1);
        if (n < 1 || n > 128) {
            throw ApiException.invalid("n", "n must be in [1, 128], got " + n);
        }
        return n;
    }

    JsonNode raw(String name) {
        JsonNode n = body.get(name);
        return n == null || n.isNull() ? null : n;
    }

    boolean has(String name) {
        return raw(name) != null;
    }

    String string(String name, String dflt) {
        JsonNode n = raw(name);
        if (n == null) {
            return dflt;
        }
        if (!n.isString()) {
            throw ApiException.invalid(name, name + " must be a string");
        }
        return n.stringValue();
    }

    String requiredString(String name) {
        String s = string(name, null);
        if (s == null) {
            throw ApiException.invalid(name, name + " is required");
        }
        return s;
    }

    boolean bool(String name, boolean dflt) {
        JsonNode n = raw(name);
        if (n == null) {
            return dflt;
        }
        if (!n.isBoolean()) {
            throw ApiException.invalid(name, name + " must be a boolean");
        }
        return n.booleanValue();
    }

    double number(String name, double dflt) {
        JsonNode n = raw(name);
        if (n == null) {
            return dflt;
        }
        if (!n.isNumber()) {
            throw ApiException.invalid(name, name + " must be a number");
        }
        double v = n.doubleValue();
        if (!Double.isFinite(v)) {
            throw ApiException.invalid(name, name + " must be finite");
        }
        return v;
    }

    Integer integer(String name, Integer dflt) {
        JsonNode n = raw(name);
        if (n == null) {
            return dflt;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw ApiException.invalid(name, name + " must be an integer");
        }
        return n.intValue();
    }

    Long longInteger(String name) {
        JsonNode n = raw(name);
        if (n == null) {
            return null;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw ApiException.invalid(name, name + " must be an integer in the int64 range");
        }
        return n.longValue();
    }

    /** A string or an array of strings (OpenAI's {@code stop}). */
    List<String> stringOrList(String name) {
        JsonNode n = raw(name);
        if (n == null) {
            return List.of();
        }
        if (n.isString()) {
            return List.of(n.stringValue());
        }
        if (!n.isArray()) {
            throw ApiException.invalid(name, name + " must be a string or an array of strings");
        }
        List<String> out = new ArrayList<>(n.size());
        for (int i = 0; i < n.size(); i++) {
            if (!n.get(i).isString()) {
                throw ApiException.invalid(name, name + "[" + i + "] must be a string");
            }
            out.add(n.get(i).stringValue());
        }
        return out;
    }

    List<Integer> intList(String name) {
        JsonNode n = raw(name);
        if (n == null) {
            return List.of();
        }
        if (!n.isArray()) {
            throw ApiException.invalid(name, name + " must be an array of integers");
        }
        List<Integer> out = new ArrayList<>(n.size());
        for (int i = 0; i < n.size(); i++) {
            JsonNode e = n.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt()) {
                throw ApiException.invalid(name, name + "[" + i + "] must be an integer");
            }
            out.add(e.intValue());
        }
        return out;
    }

    static int[] tokenArray(JsonNode n, String name, int vocab) {
        int[] ids = new int[n.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode e = n.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt()) {
                throw ApiException.invalid(name, name + " token ids must be integers");
            }
            int id = e.intValue();
            if (id < 0 || id >= vocab) {
                throw ApiException.invalid(name, "Token id " + id + " is out of vocabulary (vocab size " + vocab + ")");
            }
            ids[i] = id;
        }
        return ids;
    }
}
