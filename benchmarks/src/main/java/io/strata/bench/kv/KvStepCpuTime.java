package io.strata.bench.kv;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;

/**
 * Companion to {@link KvStepBenchmark} for shared, oversubscribed machines: runs the same decode step and
 * prefill chunk and reports both wall-clock time and the calling thread's CPU time per step. CPU time does
 * not count the time the thread waited for a core, so it stays meaningful when other processes take the
 * cores (cache and SMT interference still inflate it).
 *
 * <p>Run: {@code java -Xmx4g -cp benchmarks/target/benchmarks.jar io.strata.bench.kv.KvStepCpuTime [context] [rounds] [prefixCaching]}
 */
public final class KvStepCpuTime {

    private KvStepCpuTime() {
    }

    public static void main(String[] args) {
        int context = args.length > 0 ? Integer.parseInt(args[0]) : 131_072;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        boolean caching = args.length <= 2 || Boolean.parseBoolean(args[2]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        KvStepBenchmark bench = new KvStepBenchmark();

        KvStepBenchmark.Decode decode = new KvStepBenchmark.Decode();
        decode.context = context;
        decode.requests = 256;
        decode.prefixCaching = caching;
        decode.setUp();
        int steps = 2_000;
        double bestCpu = Double.MAX_VALUE;
        for (int round = 0; round < rounds; round++) {
            long wall = System.nanoTime();
            long cpu = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < steps; i++) {
                bench.decodeStep(decode);
            }
            double w = (System.nanoTime() - wall) / 1e3 / steps;
            double c = (mx.getCurrentThreadCpuTime() - cpu) / 1e3 / steps;
            bestCpu = round >= rounds / 2 ? Math.min(bestCpu, c) : bestCpu;
            System.out.printf(Locale.ROOT, "decode 256 x ~%d caching=" + caching + ": round %d  wall %8.1f us/step  cpu %8.1f us/step%n", context, round, w, c);
        }
        System.out.printf(Locale.ROOT, "decode 256 x ~%d caching=" + caching + ": best cpu over the second half of the rounds %.1f us/step%n", context, bestCpu);

        KvStepBenchmark.Prefill prefill = new KvStepBenchmark.Prefill();
        prefill.chunk = 8192;
        prefill.setUp();
        int chunks = 200;
        double bestPrefill = Double.MAX_VALUE;
        for (int round = 0; round < rounds; round++) {
            long wall = System.nanoTime();
            long cpu = mx.getCurrentThreadCpuTime();
            for (int i = 0; i < chunks; i++) {
                bench.prefillChunk(prefill);
            }
            double w = (System.nanoTime() - wall) / 1e3 / chunks;
            double c = (mx.getCurrentThreadCpuTime() - cpu) / 1e3 / chunks;
            bestPrefill = round >= rounds / 2 ? Math.min(bestPrefill, c) : bestPrefill;
            System.out.printf(Locale.ROOT, "prefill chunk 8192: round %d  wall %8.1f us/chunk  cpu %8.1f us/chunk%n", round, w, c);
        }
        System.out.printf(Locale.ROOT, "prefill chunk 8192: best cpu over the second half of the rounds %.1f us/chunk%n", bestPrefill);
    }
}
