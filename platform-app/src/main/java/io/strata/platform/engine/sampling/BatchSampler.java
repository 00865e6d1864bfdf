package io.strata.platform.engine.sampling;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * Samples all the rows of one engine step, spread over a few threads when there are many. A row's token depends
 * only on its logits and on its own choice's parameters, history and generator, so the rows may be sampled in
 * any order, on any thread, with the same tokens, logprobs and generator states as one after the other; what a
 * thread must not share is a {@link Sampler}'s scratch buffers, hence one sampler per thread. The calling thread
 * samples too, so {@code threads} counts it, and 1 means sequential with no pool at all.
 *
 * <p>Used by one thread at a time (the engine loop). Every helper has finished with the logits before
 * {@link #sample} returns or throws, so the caller may hand the backend its buffer back at once.
 */
public final class BatchSampler implements AutoCloseable {
    /**
     * Fewer rows than this are sampled on the calling thread: a row costs 0.05–0.2 ms at a 129k vocabulary
     * (the copy out of the step's logits and a pass or two over them), a hand-off to a parked thread tens of
     * microseconds, so a small step would gain little and wait for wake-ups.
     */
    public static final int MIN_PARALLEL_ROWS = 16;

    /**
     * One row to sample: {@code offset} is the element where its logits start, the rest is its choice's own
     * state, which only that row's task touches.
     */
    public record Row(long offset, SamplingParams params, TokenHistory history, RandomGenerator rng) {
    }

    private final Sampler[] samplers;
    private final ExecutorService helpers;
    private final int minParallelRows;
    /** Never started: only asks a segment whether a thread other than its owner may read it. */
    private final Thread anyOtherThread = Thread.ofPlatform().unstarted(() -> { });
    private final AtomicLong parallelBatches = new AtomicLong();

    /**
     * @param threads          threads that sample, the caller included; at least 1
     * @param threadNamePrefix the helpers are named this followed by 1, 2, …
     */
    public BatchSampler(int vocab, int threads, String threadNamePrefix) {
        this(vocab, threads, MIN_PARALLEL_ROWS, threadNamePrefix);
    }

    /** @param minParallelRows fewest rows that are spread over the helpers */
    public BatchSampler(int vocab, int threads, int minParallelRows, String threadNamePrefix) {
        if (threads < 1) {
            throw new IllegalArgumentException("sampling threads must be >= 1, got " + threads);
        }
        this.samplers = new Sampler[threads];
        for (int i = 0; i < threads; i++) {
            samplers[i] = new Sampler(vocab);
        }
        this.minParallelRows = Math.max(1, minParallelRows);
        // daemon: a helper parked between steps must not keep the JVM alive if the engine is never closed
        this.helpers = threads == 1 ? null
                : Executors.newFixedThreadPool(threads - 1, Thread.ofPlatform().name(threadNamePrefix, 1).daemon().factory());
    }

    /** Calls of {@link #sample} that spread their rows over the helpers. */
    public long parallelBatches() {
        return parallelBatches.get();
    }

    /**
     * Samples every row, as {@link Sampler#sample} would one after the other.
     *
     * @param logits   a step's logits, read before this returns and never kept
     * @param eosToken end-of-sequence id, suppressed below min_tokens; -1 if none
     * @return the tokens, in the order of {@code rows}
     * @throws RuntimeException or Error: what sampling the first failing row threw, as the sequential path would
     */
    public SampledToken[] sample(MemorySegment logits, List<Row> rows, int eosToken) {
        int n = rows.size();
        SampledToken[] out = new SampledToken[n];
        // a segment of a confined arena is readable by its owner thread only
        if (helpers == null || n < minParallelRows || !logits.isAccessibleBy(anyOtherThread)) {
            Sampler s = samplers[0];
            for (int i = 0; i < n; i++) {
                Row r = rows.get(i);
                out[i] = s.sample(logits, r.offset(), r.params(), r.history(), r.rng(), eosToken);
            }
            return out;
        }
        // rows are claimed one at a time rather than split in fixed ranges: a greedy row costs a scan, a top-p row
        // over a flat distribution several, and a worker that drew cheap rows takes more of them
        AtomicInteger next = new AtomicInteger();
        Throwable[] failures = new Throwable[n];
        int parts = Math.min(samplers.length, n);
        List<Future<?>> started = new ArrayList<>(parts - 1);
        for (int p = 1; p < parts; p++) {
            Sampler s = samplers[p];
            try {
                started.add(helpers.submit(() -> drain(s, logits, rows, eosToken, next, out, failures)));
            } catch (RejectedExecutionException e) {
                // closed: the rows no helper claims are left to the caller's share below
                break;
            }
        }
        if (!started.isEmpty()) {
            parallelBatches.incrementAndGet();
        }
        drain(samplers[0], logits, rows, eosToken, next, out, failures);
        awaitAll(started);
        for (Throwable t : failures) {
            if (t != null) {
                throw unchecked(t);
            }
        }
        return out;
    }

    private static void drain(Sampler s, MemorySegment logits, List<Row> rows, int eosToken, AtomicInteger next,
                              SampledToken[] out, Throwable[] failures) {
        int i;
        while ((i = next.getAndIncrement()) < out.length) {
            try {
                Row r = rows.get(i);
                out[i] = s.sample(logits, r.offset(), r.params(), r.history(), r.rng(), eosToken);
            } catch (Throwable t) {
                failures[i] = t;
            }
        }
    }

    /** Waits for every helper, interrupted or not: none may still read the logits once the caller goes on. */
    private static void awaitAll(List<Future<?>> futures) {
        boolean interrupted = false;
        Throwable failed = null;
        for (Future<?> f : futures) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    // drain keeps every row's failure to itself; only a failure of drain's own gets here
                    failed = e.getCause();
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed != null) {
            throw unchecked(failed);
        }
    }

    private static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    /** Stops the helpers; a later {@link #sample} samples on the calling thread. */
    @Override
    public void close() {
        if (helpers != null) {
            helpers.shutdown();
        }
    }
}
