package io.strata.platform.workers;

/**
 * A worker its supervisor no longer restarts (its restarts kept failing, or it crash-looped): the backend it
 * serves cannot serve again until the platform restarts. The message names the worker and why.
 */
public final class WorkerDownException extends IllegalStateException {
    public WorkerDownException(String message) {
        super(message);
    }
}
