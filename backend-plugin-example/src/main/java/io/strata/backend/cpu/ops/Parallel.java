package io.strata.backend.cpu.ops;

import java.util.stream.IntStream;

/**
 * Splits an index range over the common fork-join pool (all cores). Work below {@code minChunk}
 * items runs on the caller: for the tiny shapes of a decode step, forking costs more than it saves.
 */
public final class Parallel {
    private static final int THREADS = Runtime.getRuntime().availableProcessors();

    private Parallel() {
    }

    /** Something that processes items {@code [from, to)}. */
    @FunctionalInterface
    public interface RangeBody {
        void run(int from, int to);
    }

    public static void range(int n, int minChunk, RangeBody body) {
        int chunks = Math.min(THREADS * 4, Math.max(1, n / Math.max(1, minChunk)));
        if (chunks <= 1 || THREADS == 1) {
            body.run(0, n);
            return;
        }
        IntStream.range(0, chunks).parallel().forEach(c -> {
            int from = (int) ((long) n * c / chunks);
            int to = (int) ((long) n * (c + 1) / chunks);
            if (from < to) {
                body.run(from, to);
            }
        });
    }
}
