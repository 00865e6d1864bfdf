package io.strata.platform.chat;

import java.math.BigDecimal;
import java.util.Map;

import tools.jackson.databind.JsonNode;

/**
 * JSON text exactly as Python's {@code json.dumps(value, ensure_ascii=False)} writes it, which is what
 * DeepSeek's encoder puts into prompts: {@code ", "} and {@code ": "} separators, non-ASCII characters
 * written as is, floats in Python's shortest-repr notation ({@code 1.0}, {@code 1e-05}, {@code 1e+16}).
 * Prompt bytes must match the reference for the model to see what it was trained on.
 */
final class PythonJson {

    private PythonJson() {
    }

    static String dumps(JsonNode node) {
        StringBuilder out = new StringBuilder();
        write(node, out);
        return out.toString();
    }

    static String string(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2);
        out.append('"');
        escapeInto(s, out);
        return out.append('"').toString();
    }

    private static void write(JsonNode node, StringBuilder out) {
        switch (node.getNodeType()) {
            case OBJECT -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, JsonNode> e : node.properties()) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    out.append('"');
                    escapeInto(e.getKey(), out);
                    out.append("\": ");
                    write(e.getValue(), out);
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < node.size(); i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    write(node.get(i), out);
                }
                out.append(']');
            }
            case STRING -> {
                out.append('"');
                escapeInto(node.asString(), out);
                out.append('"');
            }
            case NUMBER -> out.append(node.isIntegralNumber() ? node.numberValue().toString() : floatRepr(node.doubleValue()));
            case BOOLEAN -> out.append(node.asBoolean() ? "true" : "false");
            case NULL, MISSING -> out.append("null");
            default -> throw new ChatFormatException("cannot write a JSON " + node.getNodeType() + " into a prompt");
        }
    }

    /** Escapes like Python's json encoder with ensure_ascii=False (control characters as \\u00xx). */
    static void escapeInto(CharSequence s, StringBuilder out) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }

    /** The closest one-digit decimal (as "d" or "10") that reads back as {@code abs}, or null. */
    private static String shortestSingleDigit(double abs, String twoDigits, int exponent) {
        int low = (twoDigits.charAt(0) - '0');
        BigDecimal exactValue = new BigDecimal(abs);
        String best = null;
        BigDecimal bestDistance = null;
        for (int candidate = low; candidate <= low + 1; candidate++) {
            BigDecimal value = BigDecimal.valueOf(candidate).scaleByPowerOfTen(exponent);
            if (Double.parseDouble(value.toString()) == abs) {
                BigDecimal distance = value.subtract(exactValue).abs();
                if (bestDistance == null || distance.compareTo(bestDistance) < 0) {
                    best = Integer.toString(candidate);
                    bestDistance = distance;
                }
            }
        }
        return best;
    }

    /** Python's {@code repr(float)}: shortest round-trip digits, scientific below 1e-4 and from 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        String sign = d < 0 ? "-" : "";
        // Double.toString gives the shortest round-trip digits (JDK 19+); BigDecimal separates them
        BigDecimal exact = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = exact.unscaledValue().toString();
        int exponent = digits.length() - 1 - exact.scale();
        if (digits.length() == 2) {
            // Java keeps two digits where one would round-trip (4.9e-324); Python takes the shortest
            String one = shortestSingleDigit(Math.abs(d), digits, exponent);
            if (one != null) {
                digits = one.substring(0, 1);
                exponent += one.length() - 1; // "10" carries into the next power of ten
            }
        }
        StringBuilder out = new StringBuilder(sign);
        if (exponent >= -4 && exponent < 16) {
            if (exponent >= 0) {
                if (digits.length() <= exponent + 1) {
                    out.append(digits).append("0".repeat(exponent + 1 - digits.length())).append(".0");
                } else {
                    out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
                }
            } else {
                out.append("0.").append("0".repeat(-exponent - 1)).append(digits);
            }
        } else {
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits, 1, digits.length());
            }
            out.append('e').append(exponent < 0 ? '-' : '+');
            int abs = Math.abs(exponent);
            if (abs < 10) {
                out.append('0');
            }
            out.append(abs);
        }
        return out.toString();
    }
}
