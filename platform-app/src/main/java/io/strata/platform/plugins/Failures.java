package io.strata.platform.plugins;

import java.util.LinkedHashSet;
import java.util.Set;

/** Turns a throwable chain into one line an operator can read on the Plugins page. */
final class Failures {
    private Failures() {
    }

    static String describe(Throwable error) {
        Set<Throwable> seen = new LinkedHashSet<>();
        StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
            String part = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
            if (text.indexOf(part) >= 0) {
                continue;
            }
            if (!text.isEmpty()) {
                text.append(" <- ");
            }
            text.append(part);
        }
        return text.length() > 1000 ? text.substring(0, 1000) + "..." : text.toString();
    }
}
