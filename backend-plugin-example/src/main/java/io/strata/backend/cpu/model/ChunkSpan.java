package io.strata.backend.cpu.model;

/**
 * Where a chunk sits in its sequence.
 *
 * @param start         native position of the first token
 * @param length        tokens in the chunk
 * @param sharedPrefix  compressed entries covering positions below this are shared pages: never written
 * @param windowFloor   window rows and compressor state below this position do not exist (recompute resume)
 */
public record ChunkSpan(int start, int length, int sharedPrefix, int windowFloor) {
    public ChunkSpan {
        if (start < 0 || length <= 0 || sharedPrefix < 0 || windowFloor < 0 || windowFloor > start) {
            throw new IllegalArgumentException("bad chunk span: start=" + start + " length=" + length
                + " sharedPrefix=" + sharedPrefix + " windowFloor=" + windowFloor);
        }
    }

    /** A plain chunk: nothing shared, the whole window available. */
    public static ChunkSpan of(int start, int length) {
        return new ChunkSpan(start, length, 0, 0);
    }

    public int end() {
        return start + length;
    }

    /** First compressed entry of a ratio that this chunk may write. */
    int firstWritableEntry(int ratio) {
        return (sharedPrefix + ratio - 1) / ratio;
    }
}
