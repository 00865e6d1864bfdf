package io.strata.platform.workers;

import java.time.Instant;

/**
 * A worker process as the console and health see it.
 *
 * @param worker      its name, e.g. {@code worker-0}
 * @param pid         the current process id (0 while none runs)
 * @param state       {@code running}, {@code restarting}, {@code failed} (restarts gave up) or {@code stopped}
 * @param restarts    restarts after a crash since the platform started
 * @param lastCrash   how the last crash ended (exit code, last stderr lines), null when none
 * @param lastCrashAt when it was noticed, null when none
 */
public record WorkerState(String worker, long pid, String state, int restarts, String lastCrash, Instant lastCrashAt) {

    /** One line for the console, e.g. "worker-0 (pid 4242): running; restarted 1 time(s), last crash ...". */
    public String summary() {
        return worker + (pid > 0 ? " (pid " + pid + ")" : "") + ": " + state
                + (restarts == 0 ? "" : "; restarted " + restarts + " time(s)")
                + (lastCrash == null ? "" : "; last crash at " + lastCrashAt + ": " + lastCrash);
    }
}
