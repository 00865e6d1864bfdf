package io.strata.platform.workers;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * Executor worker processes ({@code strata.engine.*}; docs/scale-out.md "Worker processes").
 *
 * @param workerProcess      run the backend in a worker process the platform starts and supervises
 *                           instead of inside the platform's JVM; default false
 * @param workerStartTimeout how long a worker may take to load the plugin and the model; default 5m
 * @param workerStepTimeout  how long one step may take before the worker is killed as hung; default 2m
 * @param workerHeartbeatTimeout how long a started worker may go without a heartbeat before it is killed as
 *                           hung (stopped, deadlocked, paused), whether or not a step is running; default 5s
 * @param workerJvmOptions   extra JVM options for the worker, space-separated (e.g. {@code -Xmx8g})
 * @param workerMaxRestarts  how many times one worker may be restarted within {@code workerRestartWindow}; a crash
 *                           that would need one more leaves it failed and the backend unusable; default 3
 * @param workerRestartWindow the sliding window {@code workerMaxRestarts} counts in; default 60s
 */
@ConfigurationProperties("strata.engine")
public record WorkerProperties(Boolean workerProcess, Duration workerStartTimeout, Duration workerStepTimeout,
                               Duration workerHeartbeatTimeout, String workerJvmOptions,
                               Integer workerMaxRestarts, Duration workerRestartWindow) {
    public WorkerProperties {
        workerProcess = workerProcess != null && workerProcess;
        workerStartTimeout = workerStartTimeout == null ? Duration.ofMinutes(5) : workerStartTimeout;
        workerStepTimeout = workerStepTimeout == null ? Duration.ofMinutes(2) : workerStepTimeout;
        workerHeartbeatTimeout = workerHeartbeatTimeout == null ? Duration.ofSeconds(5) : workerHeartbeatTimeout;
        workerJvmOptions = workerJvmOptions == null ? "" : workerJvmOptions.trim();
        workerMaxRestarts = workerMaxRestarts == null ? 3 : workerMaxRestarts;
        workerRestartWindow = workerRestartWindow == null ? Duration.ofSeconds(60) : workerRestartWindow;
        if (workerMaxRestarts < 0) {
            throw new IllegalArgumentException("strata.engine.worker-max-restarts must not be negative, got " + workerMaxRestarts);
        }
        if (workerRestartWindow.isNegative() || workerRestartWindow.isZero()) {
            throw new IllegalArgumentException("strata.engine.worker-restart-window must be positive, got " + workerRestartWindow);
        }
        for (Duration d : new Duration[]{workerStartTimeout, workerStepTimeout, workerHeartbeatTimeout}) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(
                        "strata.engine.worker-start-timeout, worker-step-timeout and worker-heartbeat-timeout must be positive");
            }
        }
        if (workerHeartbeatTimeout.toMillis() < 200) {
            throw new IllegalArgumentException("strata.engine.worker-heartbeat-timeout must be at least 200ms, got "
                    + workerHeartbeatTimeout.toMillis() + "ms");
        }
    }

    /** How often a worker sends a heartbeat: four beats fit in the timeout, so one late beat is no alarm. */
    public Duration workerHeartbeatInterval() {
        return workerHeartbeatTimeout.dividedBy(4);
    }

    /** An empty restart window with these limits. */
    public RestartWindow restartWindow() {
        return RestartWindow.of(workerMaxRestarts, workerRestartWindow);
    }

    /** Worker processes off (the default). */
    public static WorkerProperties off() {
        return new WorkerProperties(false, null, null, null, null, null, null);
    }
}
