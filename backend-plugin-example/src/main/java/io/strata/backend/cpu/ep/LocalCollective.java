package io.strata.backend.cpu.ep;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

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
        group.abort();
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

    /**
     * The shared mailbox and a barrier that can be broken for good. Arriving, waiting and the broken flag are all
     * under the group's monitor, so a rank that arrives just after an abort fails at once instead of waiting out
     * the timeout in a fresh round (a {@code CyclicBarrier} reset by the abort left that window open).
     */
    private static final class Group {
        final int size;
        final long timeoutSeconds;
        final Object[] mail;
        private int arrived;
        private long round;
        private String broken;

        Group(int size, long timeoutSeconds) {
            this.size = size;
            this.timeoutSeconds = timeoutSeconds;
            this.mail = new Object[size];
        }

        synchronized void abort() {
            breakGroup("another rank failed or aborted the group");
        }

        /** Returns once every rank arrived in this round; throws if the group is or gets broken meanwhile. */
        synchronized void await(int rank) {
            if (broken != null) {
                throw new IllegalStateException("rank " + rank + ": " + broken);
            }
            long mine = round;
            if (++arrived == size) {
                arrived = 0;
                round++;
                notifyAll();
                return;
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            while (round == mine) {
                if (broken != null) {
                    throw new IllegalStateException("rank " + rank + ": " + broken);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    breakGroup("a rank got no answer from the others within " + timeoutSeconds + " s");
                    throw new IllegalStateException("rank " + rank + ": no answer from the other ranks within "
                        + timeoutSeconds + " s");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    breakGroup("a rank was interrupted in a collective");
                    throw new IllegalStateException("rank " + rank + ": interrupted in a collective", e);
                }
            }
        }

        private void breakGroup(String why) {
            if (broken == null) {
                broken = why;
            }
            notifyAll();
        }
    }
}
