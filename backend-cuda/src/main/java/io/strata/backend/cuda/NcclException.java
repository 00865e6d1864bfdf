package io.strata.backend.cuda;

/** An NCCL call that failed (or NCCL missing: code −1), with NCCL's own text. */
public final class NcclException extends RuntimeException {
    private final int code;

    public NcclException(int code, String message) {
        super(message);
        this.code = code;
    }

    public int code() {
        return code;
    }
}
