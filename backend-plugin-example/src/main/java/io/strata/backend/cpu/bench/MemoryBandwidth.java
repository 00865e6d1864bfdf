package io.strata.backend.cpu.bench;

import io.strata.backend.cpu.ops.Parallel;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures how fast all cores can stream-read host memory: the roofline for decode, which reads every
 * weight once per token. Same thread pool and vector loads as the kernels, buffer far larger than caches.
 */
public final class MemoryBandwidth {
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;

    private MemoryBandwidth() {
    }

    /** Best-of-{@code passes} read bandwidth in bytes per second over a buffer of {@code bytes}. */
    public static double measure(long bytes, int passes) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment seg = arena.allocate(bytes, 64);
            for (long off = 0; off < bytes; off += 4096) {
                seg.set(ValueLayout.JAVA_LONG, off, off * 0x9E3779B97F4A7C15L);
            }
            double best = 0;
            AtomicLong sink = new AtomicLong();
            int chunk = 1 << 20;
            int chunks = (int) (bytes / chunk);
            // warm the kernel up on a cache-sized prefix so every measured pass runs compiled vector code
            for (int p = 0; p < 2000; p++) {
                Parallel.range(2, 1, (from, to) -> {
                    IntVector acc = IntVector.zero(I);
                    for (long off = (long) from * 65536; off < (long) to * 65536; off += 64) {
                        acc = acc.add(IntVector.fromMemorySegment(I, seg, off, ByteOrder.LITTLE_ENDIAN));
                    }
                    sink.addAndGet(acc.reduceLanes(VectorOperators.ADD));
                });
            }
            for (int p = 0; p < passes; p++) {
                long t0 = System.nanoTime();
                Parallel.range(chunks, 1, (from, to) -> {
                    IntVector acc = IntVector.zero(I);
                    for (long off = (long) from * chunk; off < (long) to * chunk; off += 64) {
                        acc = acc.add(IntVector.fromMemorySegment(I, seg, off, ByteOrder.LITTLE_ENDIAN));
                    }
                    sink.addAndGet(acc.reduceLanes(VectorOperators.ADD));
                });
                double s = (System.nanoTime() - t0) / 1e9;
                best = Math.max(best, (double) chunks * chunk / s);
            }
            if (sink.get() == 42) {
                System.out.print("");
            }
            return best;
        }
    }
}
