package io.strata.platform.engine;

/** Raised at submission when {@code max-queued-requests} or {@code max-queued-tokens} would be exceeded. */
public class QueueFullException extends RuntimeException {
    public QueueFullException(String message) {
        super(message);
    }
}
