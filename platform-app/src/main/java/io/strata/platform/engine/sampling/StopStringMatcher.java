package io.strata.platform.engine.sampling;

import java.util.List;

/**
 * Watches streamed text for stop strings without ever letting part of one reach the client: text that
 * could still be the start of a stop string is held back until the next delta decides it.
 * One instance per choice; not thread-safe.
 */
public final class StopStringMatcher {

    /** What may be sent now, and whether (and on which string) the choice stopped. */
    public record Step(String emit, String matchedStop) {
        public boolean stopped() {
            return matchedStop != null;
        }
    }

    private final List<String> stops;
    private final boolean includeStop;
    private final int longest;
    private final StringBuilder held = new StringBuilder();
    private boolean stopped;

    public StopStringMatcher(List<String> stops, boolean includeStop) {
        this.stops = List.copyOf(stops);
        this.includeStop = includeStop;
        this.longest = this.stops.stream().mapToInt(String::length).max().orElse(0);
    }

    public boolean isEmpty() {
        return stops.isEmpty();
    }

    /** Feeds the next decoded text; after a stop every further call emits nothing. */
    public Step accept(String delta) {
        if (stopped) {
            return new Step("", null);
        }
        if (stops.isEmpty()) {
            return new Step(delta, null);
        }
        held.append(delta);
        int bestAt = -1;
        String best = null;
        for (String s : stops) {
            int at = held.indexOf(s);
            if (at >= 0 && (bestAt < 0 || at < bestAt || (at == bestAt && s.length() > best.length()))) {
                bestAt = at;
                best = s;
            }
        }
        if (best != null) {
            stopped = true;
            String out = held.substring(0, includeStop ? bestAt + best.length() : bestAt);
            held.setLength(0);
            return new Step(out, best);
        }
        int keep = partialSuffix();
        int cut = held.length() - keep;
        if (cut > 0 && Character.isHighSurrogate(held.charAt(cut - 1))) {
            cut--;
        }
        String out = held.substring(0, cut);
        held.delete(0, cut);
        return new Step(out, null);
    }

    /** Text still held when the choice ends for another reason (length, EOS): it was not a stop string. */
    public String flush() {
        String out = stopped ? "" : held.toString();
        held.setLength(0);
        return out;
    }

    /** Length of the longest suffix of {@code held} that is a proper prefix of some stop string. */
    private int partialSuffix() {
        int max = Math.min(longest - 1, held.length());
        for (int len = max; len > 0; len--) {
            int from = held.length() - len;
            for (String s : stops) {
                if (s.length() > len && regionIsPrefix(from, len, s)) {
                    return len;
                }
            }
        }
        return 0;
    }

    private boolean regionIsPrefix(int from, int len, String s) {
        for (int i = 0; i < len; i++) {
            if (held.charAt(from + i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
