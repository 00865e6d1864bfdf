package io.strata.model.catalogue;

/** A checkpoint whose tensors do not match its config; the message lists every problem. */
public final class CheckpointValidationException extends RuntimeException {

    private final ValidationReport report;

    public CheckpointValidationException(ValidationReport report) {
        super(report.summary());
        this.report = report;
    }

    public ValidationReport report() {
        return report;
    }
}
