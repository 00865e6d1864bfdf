package io.strata.platform.workers;

/**
 * A worker process died (exited, was killed as hung, or its channel broke) while, or before, serving a call:
 * the call's work is lost, and so is the worker's KV. The message says how it ended.
 */
public final class WorkerCrashedException extends IllegalStateException {
    public WorkerCrashedException(String message) {
        super(message);
    }
}
