package io.strata.backend.cpu.ep;

/**
 * What one rank of an expert-parallel group needs from the others: the collectives NCCL offers, with the
 * numerics pinned down so that a result never depends on timing. Every rank of the group must call the same
 * operations in the same order (a rank with no tokens still takes part, with empty blocks).
 */
public interface Collective {

    /** This rank, {@code 0 ≤ rank < size}. */
    int rank();

    /** Ranks in the group. */
    int size();

    /**
     * All-to-all of variable-size blocks: {@code send[d]} goes to rank {@code d} (a block to oneself is kept);
     * the result's element {@code s} is what rank {@code s} sent here. Blocks may be empty, never null; the
     * result never aliases another rank's arrays.
     */
    float[][] allToAll(float[][] send);

    /** As {@link #allToAll(float[][])} for int blocks (routing metadata). */
    int[][] allToAll(int[][] send);

    /**
     * Element-wise sum over the ranks of {@code data[off .. off+len)}, written back on every rank. The sum is
     * taken in rank order, {@code ((x0 + x1) + x2) + …}, so every rank gets the same bits on every run.
     */
    void allReduceSum(float[] data, int off, int len);
}
