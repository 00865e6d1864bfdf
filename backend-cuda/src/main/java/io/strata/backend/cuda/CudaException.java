package io.strata.backend.cuda;

/** A failed CUDA call, carrying CUDA's own code and message. */
public final class CudaException extends RuntimeException {
    private final int code;

    public CudaException(int code, String message) {
        super(message);
        this.code = code;
    }

    /** CUDA's error code ({@code cudaError_t}), or -1 when the library itself is missing. */
    public int code() {
        return code;
    }
}
