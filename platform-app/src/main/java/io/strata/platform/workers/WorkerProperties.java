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
 * @param workerJvmOptions   extra JVM options for the worker, space-separated (e.g. {@code -Xmx8g})
 */
@ConfigurationProperties("strata.engine")
public record WorkerProperties(Boolean workerProcess, Duration workerStartTimeout, Duration workerStepTimeout,
                               String workerJvmOptions) {
    public WorkerProperties {
        workerProcess = workerProcess != null && workerProcess;
        workerStartTimeout = workerStartTimeout == null ? Duration.ofMinutes(5) : workerStartTimeout;
        workerStepTimeout = workerStepTimeout == null ? Duration.ofMinutes(2) : workerStepTimeout;
        workerJvmOptions = workerJvmOptions == null ? "" : workerJvmOptions.trim();
        if (workerStartTimeout.isNegative() || workerStartTimeout.isZero() || workerStepTimeout.isNegative()
                || workerStepTimeout.isZero()) {
            throw new IllegalArgumentException("strata.engine.worker-start-timeout and worker-step-timeout must be positive");
        }
    }

    /** Worker processes off (the default). */
    public static WorkerProperties off() {
        return new WorkerProperties(false, null, null, null);
    }
}
