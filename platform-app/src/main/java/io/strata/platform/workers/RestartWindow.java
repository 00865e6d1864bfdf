package io.strata.platform.workers;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The restarts one worker needed within a sliding window, to tell a worker that crashed once from one that
 * crashes on every step (a device fault each time, say): the latter would otherwise be restarted forever while
 * every request fails. Immutable; {@link #record} returns the window after one more restart.
 *
 * @param max      how many restarts the window may hold; one more means the worker crash-loops
 * @param window   how far back restarts count
 * @param restarts when the restarts still inside the window were asked for, oldest first
 */
public record RestartWindow(int max, Duration window, List<Instant> restarts) {
    public RestartWindow {
        if (max < 0) {
            throw new IllegalArgumentException("max restarts must not be negative, got " + max);
        }
        if (window == null || window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("the restart window must be positive, got " + window);
        }
        restarts = List.copyOf(restarts);
    }

    /** No restarts yet. */
    public static RestartWindow of(int max, Duration window) {
        return new RestartWindow(max, window, List.of());
    }

    /** This window with one more restart at {@code now}, and without the restarts that fell out of it by then. */
    public RestartWindow record(Instant now) {
        Instant since = now.minus(window);
        List<Instant> kept = new ArrayList<>(restarts.size() + 1);
        for (Instant t : restarts) {
            if (t.isAfter(since)) {
                kept.add(t);
            }
        }
        kept.add(now);
        return new RestartWindow(max, window, kept);
    }

    /** Restarts inside the window. */
    public int count() {
        return restarts.size();
    }

    /** More restarts inside the window than {@link #max} allows: stop restarting. */
    public boolean exceeded() {
        return restarts.size() > max;
    }
}
