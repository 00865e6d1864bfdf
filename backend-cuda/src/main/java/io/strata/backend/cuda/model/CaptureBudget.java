package io.strata.backend.cuda.model;

/**
 * How much wall time and device memory capturing decode graphs may take at start-up. Shapes past either
 * limit are not captured and decode eagerly; the reason shows on the console with the capture summary.
 *
 * @param millis wall time of the whole capture (the eager sizing pass included)
 * @param bytes  device memory the captured graphs take beyond the frozen workspace
 */
record CaptureBudget(long millis, long bytes) {
    CaptureBudget {
        if (millis < 0 || bytes < 0) {
            throw new IllegalArgumentException("a capture budget is not negative: " + millis + " ms, " + bytes + " bytes");
        }
    }

    /** Why capturing must stop once it has taken {@code elapsedMillis} and {@code usedBytes}; null to go on. */
    String spent(long elapsedMillis, long usedBytes) {
        if (elapsedMillis > millis) {
            return "capture time budget of " + millis + " ms spent";
        }
        if (usedBytes > bytes) {
            return "capture memory budget of " + (bytes >> 20) + " MiB spent";
        }
        return null;
    }
}
