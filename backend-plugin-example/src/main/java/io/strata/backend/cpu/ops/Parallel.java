package io.strata.backend.cpu.ops;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Splits an index range over all cores with a small fixed pool of daemon workers plus the caller.
 * A decode step makes hundreds of short parallel calls, so dispatch must cost microseconds: workers spin
 * briefly for the next job before parking. Work below {@code minChunk} items runs on the caller, and a
 * call made from inside a job runs inline (no nesting).
 */
public final class Parallel {
    private static final Parallel DEFAULT = new Parallel(
        Integer.getInteger("strata.cpu.threads", Runtime.getRuntime().availableProcessors()));
    private static final long SPIN_NANOS = 50_000;

    private final Worker[] workers;
    private volatile Job current;

    /** Something that processes items {@code [from, to)}. */
    @FunctionalInterface
    public interface RangeBody {
        void run(int from, int to);
    }

    /** One call: its own counters, so a late worker can never mix two calls' ranges. */
    private record Job(RangeBody body, int n, int chunks, AtomicInteger next, AtomicInteger done,
                       AtomicReference<Throwable> error) {
        void work() {
            int i;
            while ((i = next.getAndIncrement()) < chunks) {
                int from = (int) ((long) n * i / chunks);
                int to = (int) ((long) n * (i + 1) / chunks);
                try {
                    if (from < to) {
                        body.run(from, to);
                    }
                } catch (Throwable t) {
                    error.compareAndSet(null, t);
                } finally {
                    done.incrementAndGet();
                }
            }
        }
    }

    private Parallel(int threads) {
        workers = new Worker[Math.max(0, threads - 1)];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i);
            workers[i].start();
        }
    }

    /** Runs {@code body} over {@code [0, n)} on the shared pool. */
    public static void range(int n, int minChunk, RangeBody body) {
        DEFAULT.run(n, minChunk, body);
    }

    /** Number of threads (workers plus caller) the shared pool uses. */
    public static int threads() {
        return DEFAULT.workers.length + 1;
    }

    private synchronized void run(int total, int minChunk, RangeBody body) {
        int threads = workers.length + 1;
        int c = Math.min(threads * 4, Math.max(1, total / Math.max(1, minChunk)));
        if (c <= 1 || workers.length == 0 || Thread.currentThread() instanceof Worker) {
            body.run(0, total);
            return;
        }
        Job job = new Job(body, total, c, new AtomicInteger(), new AtomicInteger(), new AtomicReference<>());
        current = job;
        for (Worker w : workers) {
            LockSupport.unpark(w);
        }
        job.work();
        // yield rather than spin: on a shared or oversubscribed host a spinning caller can hold the very
        // core the worker needs to finish its last chunk
        while (job.done.get() < c) {
            Thread.yield();
        }
        Throwable t = job.error.get();
        if (t instanceof RuntimeException re) {
            throw re;
        } else if (t instanceof Error e) {
            throw e;
        } else if (t != null) {
            throw new IllegalStateException(t);
        }
    }

    private final class Worker extends Thread {
        Worker(int i) {
            super("strata-cpu-" + i);
            setDaemon(true);
        }

        @Override
        public void run() {
            Job seen = null;
            while (true) {
                long start = System.nanoTime();
                Job job;
                while ((job = current) == seen) {
                    if (System.nanoTime() - start < SPIN_NANOS) {
                        Thread.yield();
                    } else {
                        LockSupport.parkNanos(this, 1_000_000);
                    }
                }
                seen = job;
                job.work();
            }
        }
    }
}
