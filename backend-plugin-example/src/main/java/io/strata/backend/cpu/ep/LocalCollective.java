package io.strata.backend.cpu.ep;

import java.util.Arrays;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link Collective} for N ranks that are threads of one JVM: the fake ranks of the CPU backend's
 * expert-parallel tests, and the stand-in the design uses before NCCL. Each operation is posting into a
 * shared mailbox, a barrier, reading, and a second barrier (so the next operation cannot overwrite a block
 * before every rank has read it). A rank that throws or stops answering breaks the barrier: the other ranks'
 * calls then fail with {@link IllegalStateException} instead of waiting forever.
 */
public final class LocalCollective implements Collective {
    private final Group group;
    private final int rank;

    private LocalCollective(Group group, int rank) {
        this.group = group;
        this.rank = rank;
    }

    /** One endpoint per rank, {@code ranks[r].rank() == r}; a call waits at most {@code timeoutSeconds} for the others. */
    public static LocalCollective[] group(int size, long timeoutSeconds) {
        if (size < 1) {
            throw new IllegalArgumentException("a group needs at least one rank, not " + size);
        }
        Group g = new Group(size, timeoutSeconds);
        LocalCollective[] ranks = new LocalCollective[size];
        for (int r = 0; r < size; r++) {
            ranks[r] = new LocalCollective(g, r);
        }
        return ranks;
    }

    /** Breaks the group: every rank's pending and later calls fail (what a crashed worker does to NCCL peers). */
    public void abort() {
        group.barrier.reset();
        group.aborted = true;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return group.size;
    }

    @Override
    public float[][] allToAll(float[][] send) {
        checkBlocks(send.length);
        group.mail[rank] = send;
        group.await(rank);
        float[][] out = new float[group.size][];
        for (int s = 0; s < group.size; s++) {
            float[] block = ((float[][]) group.mail[s])[rank];
            out[s] = Arrays.copyOf(block, block.length);
        }
        group.await(rank);
        return out;
    }

    @Override
    public int[][] allToAll(int[][] send) {
        checkBlocks(send.length);
        group.mail[rank] = send;
        group.await(rank);
        int[][] out = new int[group.size][];
        for (int s = 0; s < group.size; s++) {
            int[] block = ((int[][]) group.mail[s])[rank];
            out[s] = Arrays.copyOf(block, block.length);
        }
        group.await(rank);
        return out;
    }

    @Override
    public void allReduceSum(float[] data, int off, int len) {
        group.mail[rank] = new Slice(data, off, len);
        group.await(rank);
        float[] sum = new float[len];
        for (int s = 0; s < group.size; s++) {
            Slice in = (Slice) group.mail[s];
            if (in.len != len) {
                throw new IllegalArgumentException("all-reduce of " + len + " values on rank " + rank + " but "
                    + in.len + " on rank " + s);
            }
            for (int i = 0; i < len; i++) {
                sum[i] = s == 0 ? in.data[in.off + i] : sum[i] + in.data[in.off + i];
            }
        }
        group.await(rank); // every rank has read every input before any input is overwritten
        System.arraycopy(sum, 0, data, off, len);
    }

    private void checkBlocks(int n) {
        if (n != group.size) {
            throw new IllegalArgumentException("all-to-all needs one block per rank (" + group.size + "), got " + n);
        }
    }

    private record Slice(float[] data, int off, int len) {
    }

    private static final class Group {
        final int size;
        final long timeoutSeconds;
        final CyclicBarrier barrier;
        final Object[] mail;
        volatile boolean aborted;

        Group(int size, long timeoutSeconds) {
            this.size = size;
            this.timeoutSeconds = timeoutSeconds;
            this.barrier = new CyclicBarrier(size);
            this.mail = new Object[size];
        }

        void await(int rank) {
            if (aborted) {
                throw new IllegalStateException("rank " + rank + ": the group was aborted");
            }
            try {
                barrier.await(timeoutSeconds, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                barrier.reset();
                throw new IllegalStateException("rank " + rank + ": interrupted in a collective", e);
            } catch (BrokenBarrierException e) {
                throw new IllegalStateException("rank " + rank + ": another rank failed or aborted the group", e);
            } catch (TimeoutException e) {
                throw new IllegalStateException("rank " + rank + ": no answer from the other ranks within "
                    + timeoutSeconds + " s", e);
            }
        }
    }
}
