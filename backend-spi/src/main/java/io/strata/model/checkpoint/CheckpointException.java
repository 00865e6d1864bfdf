package io.strata.model.checkpoint;

/**
 * A checkpoint file or index that cannot be used. The message always names the file, and the tensor when
 * one is concerned.
 */
public final class CheckpointException extends RuntimeException {

    private final String file;
    private final String tensor;

    public CheckpointException(String file, String tensor, String problem) {
        this(file, tensor, problem, null);
    }

    public CheckpointException(String file, String tensor, String problem, Throwable cause) {
        super(file + (tensor == null ? "" : ": tensor '" + tensor + "'") + ": " + problem, cause);
        this.file = file;
        this.tensor = tensor;
    }

    public String file() {
        return file;
    }

    /** The tensor concerned, or {@code null} for a file-level problem. */
    public String tensor() {
        return tensor;
    }
}
