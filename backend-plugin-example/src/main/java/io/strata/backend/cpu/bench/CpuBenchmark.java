package io.strata.backend.cpu.bench;

import io.strata.backend.cpu.CpuBackendProvider;
import io.strata.backend.cpu.CpuExecutor;
import io.strata.backend.cpu.ops.Parallel;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Prefill and decode throughput of the CPU backend through the execution SPI (paged FP8 + FP4 KV), on the
 * dsv4-tiny-fp8 fixture and on a synthetic hidden-1024 × 8-layer checkpoint in the real weight formats,
 * with this machine's memory bandwidth measured in the same run and decode's achieved fraction of it
 * (weight bytes one token reads × tokens/s ÷ bandwidth).
 *
 * <p>Usage: {@code CpuBenchmark [modelsDir] [--prefill N] [--decode N] [--bandwidth-mib N]}
 */
public final class CpuBenchmark {

    record Result(String model, long weightBytesPerToken, int prefillTokens, double prefillTps, int decodeTokens,
                  double decodeTps, double prefillCpuMs, double decodeCpuMs) {
    }

    public static void main(String[] args) throws Exception {
        Path models = Path.of(args.length > 0 && !args[0].startsWith("--") ? args[0] : "models");
        int prefill = intArg(args, "--prefill", 512);
        int decode = intArg(args, "--decode", 64);
        long bwBytes = intArg(args, "--bandwidth-mib", 2048) * 1024L * 1024L;
        System.out.printf(Locale.ROOT, "CPU benchmark: %d threads, Java %s, %s%n", Parallel.threads(),
            Runtime.version(), System.getProperty("os.arch"));
        System.out.println("load average before: " + loadAverage());
        double bw = MemoryBandwidth.measure(bwBytes, 5);
        System.out.printf(Locale.ROOT, "memory read bandwidth: %.2f GB/s (best of 5 passes over %d MiB)%n", bw / 1e9,
            bwBytes >> 20);

        // the fixture is optional: a GPU host may get only the bundle (the synthetic model is written here)
        Path fixture = models.resolve("dsv4-tiny-fp8");
        Result tiny = Files.isDirectory(fixture) ? run("dsv4-tiny-fp8", fixture, Math.min(prefill, 300), decode) : null;
        if (tiny == null) {
            System.out.println("no " + fixture + ": the fixture's run is skipped");
        }
        Path synth = Files.createTempDirectory("strata-synthetic-");
        long t0 = System.nanoTime();
        SyntheticCheckpoint.write(SyntheticCheckpoint.H1024_L8, synth);
        System.out.printf(Locale.ROOT, "wrote synthetic checkpoint (%d MiB) in %.1f s%n",
            Files.size(synth.resolve("model.safetensors")) >> 20, (System.nanoTime() - t0) / 1e9);
        Result big;
        try {
            big = run("synthetic h1024 x 8 layers", synth, prefill, decode);
        } finally {
            Files.deleteIfExists(synth.resolve("model.safetensors"));
            Files.deleteIfExists(synth.resolve("config.json"));
            Files.deleteIfExists(synth);
        }
        System.out.println();
        System.out.println("| model | weight MiB/token | prefill tok/s (prompt) | decode tok/s | decode GB/s | of bandwidth "
            + "| decode CPU-ms/token | GB/s per CPU-second |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (Result r : tiny == null ? List.of(big) : List.of(tiny, big)) {
            double gbs = r.weightBytesPerToken * r.decodeTps / 1e9;
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f (%d) | %.1f | %.2f | %.0f%% | %.1f | %.2f |%n", r.model,
                r.weightBytesPerToken / 1048576.0, r.prefillTps, r.prefillTokens, r.decodeTps, gbs, 100 * gbs * 1e9 / bw,
                r.decodeCpuMs, r.weightBytesPerToken / (r.decodeCpuMs * 1e6));
        }
        System.out.printf(Locale.ROOT, "bandwidth %.2f GB/s; load average after: %s%n", bw / 1e9, loadAverage());
    }

    /** The host's 1/5/15-minute load averages: on a shared machine they say how much of it the run had. */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "n/a";
        }
    }

    static Result run(String name, Path dir, int prefill, int decode) throws Exception {
        ModelConfig config = ModelConfig.parse(dir.resolve("config.json"));
        try (Checkpoint ckpt = Checkpoint.open(dir);
             ModelExecutor exec = new CpuBackendProvider().load(config, ckpt, new LoadOptions(name, 8192, 8, 0))) {
            int positions = prefill + decode + 64;
            KvLayout layout = KvLayout.of(KvModelShape.of(name, config), KvPrecision.DEFAULT);
            Map<PageBucket, Integer> pool = PageAllocator.pagesNeeded(layout, positions, 2);
            exec.allocateKv(layout, pool);
            PageAllocator pages = new PageAllocator(layout, pool);
            SplittableRandom rnd = new SplittableRandom(7);
            int[] tokens = rnd.ints(positions, 2, config.vocabSize()).toArray();
            // warm-up sequence (JIT), then the measured one on fresh pages
            sequence(exec, tokens, BlockTable.fromZero(pages.tables(positions)), Math.min(prefill, 64), 16, 0);
            double[] tps = sequence(exec, tokens, BlockTable.fromZero(pages.tables(positions)), prefill, decode, 1);
            long bytes = ((CpuExecutor) exec).model().weightBytesPerToken();
            batchedDecode(exec, layout, tokens, positions, config.vocabSize());
            System.out.printf(Locale.ROOT, "%s: prefill %d tokens %.1f tok/s (%.2f CPU-ms/token), decode %d tokens "
                + "%.1f tok/s (%.2f CPU-ms/token)%n", name, prefill, tps[0], tps[2], decode, tps[1], tps[3]);
            return new Result(name, bytes, prefill, tps[0], decode, tps[1], tps[2], tps[3]);
        }
    }

    /** Prefill {@code prefill} tokens in one chunk, then {@code decode} single-token steps; returns tok/s. */
    static double[] sequence(ModelExecutor exec, int[] tokens, BlockTable[] tables, int prefill, int decode, long id) {
        long t0 = System.nanoTime();
        long c0 = cpuNanos();
        exec.execute(new StepBatch(List.of(SequenceChunk.of(id, java.util.Arrays.copyOf(tokens, prefill), 0, tables))));
        long t1 = System.nanoTime();
        long c1 = cpuNanos();
        for (int i = 0; i < decode; i++) {
            int pos = prefill + i;
            exec.execute(new StepBatch(List.of(SequenceChunk.of(id, new int[]{tokens[pos]}, pos, tables))));
        }
        long t2 = System.nanoTime();
        long c2 = cpuNanos();
        return new double[]{prefill / ((t1 - t0) / 1e9), decode / ((t2 - t1) / 1e9),
            (c1 - c0) / 1e6 / prefill, (c2 - c1) / 1e6 / decode};
    }

    /**
     * Eight sequences decoding together (one chunk each per step), as continuous batching runs them: the
     * projections and experts read their weights once per step for all eight.
     */
    static void batchedDecode(ModelExecutor exec, KvLayout layout, int[] tokens, int positions, int vocab) {
        int sequences = 8;
        int prompt = 32;
        int steps = 16;
        Map<PageBucket, Integer> pool = PageAllocator.pagesNeeded(layout, positions, sequences);
        exec.allocateKv(layout, pool);
        PageAllocator pages = new PageAllocator(layout, pool);
        BlockTable[][] tables = new BlockTable[sequences][];
        List<SequenceChunk> prefill = new java.util.ArrayList<>();
        for (int s = 0; s < sequences; s++) {
            tables[s] = BlockTable.fromZero(pages.tables(positions));
            prefill.add(SequenceChunk.of(s, java.util.Arrays.copyOfRange(tokens, s, s + prompt), 0, tables[s]));
        }
        exec.execute(new StepBatch(prefill));
        long t0 = System.nanoTime();
        long c0 = cpuNanos();
        for (int i = 0; i < steps; i++) {
            List<SequenceChunk> step = new java.util.ArrayList<>();
            for (int s = 0; s < sequences; s++) {
                step.add(SequenceChunk.of(s, new int[]{tokens[s + prompt + i]}, prompt + i, tables[s]));
            }
            exec.execute(new StepBatch(step));
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "  batched decode, %d sequences x %d steps: %.1f tok/s (%.2f CPU-ms/token)%n",
            sequences, steps, sequences * steps / secs, (cpuNanos() - c0) / 1e6 / (sequences * steps));
    }

    /** CPU time of the whole process: unlike wall time, it does not grow when other processes take the cores. */
    static long cpuNanos() {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return 0;
    }

    private static int intArg(String[] args, String flag, int dflt) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(flag)) {
                return Integer.parseInt(args[i + 1]);
            }
        }
        return dflt;
    }
}
