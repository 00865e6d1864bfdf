package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.backend.cpu.bench.SyntheticCheckpoint;
import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.DeviceBuffer;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Decode step time of the CUDA executor on a V4-Flash-shaped slice: the real V4-Flash dimensions and the
 * first {@code layers} layers of its schedule (window, window, then C4A / C128A), seeded random FP8/FP4
 * weights written on the GPU host. The KV pools are filled with small random entries as if every request
 * had {@code context} positions behind it (decode cost depends on how much is read, not on what), then
 * for every (context, batch) the step time is measured for each variant of the ablation: one or two
 * streams, eager or replayed CUDA graphs, the whole sweep repeated so every figure appears twice. Also
 * measured in the same run: the device-to-device copy bandwidth (the roofline's denominator) and a per
 * component profile of an eager one-stream step. Results go to a JSON file, one object per measurement.
 *
 * <p>usage: {@code ModelDecodeBench <work dir> [layers=8] [contexts=8192,32768,131072] [batches=1,8,64,256]
 * [steps=16] [warmup=3] [repeats=2] [variants=eager-1,eager-2,graphs-1,graphs-2] [indexer-scales=real]
 * [out=decode.json]}; a variant may end in {@code -argmax} (every row greedy: the device returns tokens, not logits).
 * {@code warmup}: untimed steps before the timed ones of every (variant, context, batch). A few warm the device and
 * the buffers; the host's share of a step (building its plan) reaches the speed of a serving process that has run
 * for a while only after some hundred steps of the JVM's compilers, so a larger warm-up measures that steady state
 * (the default 3 measures a JVM that has planned a few dozen steps in all). With
 * {@code indexer-scales=real} (the default) the indexer keys' FP4 block scales are set as real rows have them (an
 * entry's four within a factor of two); {@code random} leaves them to the masked random fill (2^-127 .. 2^-72, four
 * unrelated exponents per key), which sends every key down the scores kernel's four-term form.
 */
public final class ModelDecodeBench {
    private static final int WARMUP = 3;
    /** Steps the component profile after the timed runs fills its requests for. */
    static final int PROFILE_STEPS = 4;
    /** Window and compressor-state positions kept before the first decoded position (window 128, states < 256). */
    private static final int WINDOW_MARGIN = 512;

    /**
     * eager|graphs-streams[-argmax]: with -argmax every row is an argmax-only chunk (a greedy request's decode step:
     * the device returns the token), without it every row's logits come back whole (any other request).
     */
    private record Variant(String name, int streams, boolean graphs, boolean argmax) {
        static Variant parse(String s) {
            String[] p = s.split("-");
            if (p.length < 2 || p.length > 3 || !(p[0].equals("graphs") || p[0].equals("eager"))
                || (p.length == 3 && !p[2].equals("argmax"))) {
                throw new IllegalArgumentException("variant " + s + ": expected eager|graphs-<streams>[-argmax]");
            }
            return new Variant(s, Integer.parseInt(p[1]), p[0].equals("graphs"), p.length == 3);
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Map<String, String> opt = new LinkedHashMap<>(Map.of("layers", "8", "contexts", "8192,32768,131072",
            "batches", "1,8,64,256", "steps", "16", "warmup", Integer.toString(WARMUP), "repeats", "2",
            "variants", "eager-1,eager-2,graphs-1,graphs-2",
            "indexer-scales", "real", "out", "decode.json"));
        for (int i = 1; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            opt.put(kv[0], kv[1]);
        }
        int layers = Integer.parseInt(opt.get("layers"));
        int[] contexts = ints(opt.get("contexts"));
        int[] batches = ints(opt.get("batches"));
        int steps = Integer.parseInt(opt.get("steps"));
        int warmup = Integer.parseInt(opt.get("warmup"));
        if (warmup < 0) {
            throw new IllegalArgumentException("warmup: 0 or more steps, not " + warmup);
        }
        // the pages and tables cover WARMUP warm-up steps before the timed ones; a longer warm-up counts as more steps
        int span = steps + Math.max(0, warmup - WARMUP);
        int repeats = Integer.parseInt(opt.get("repeats"));
        List<Variant> variants = Arrays.stream(opt.get("variants").split(",")).map(Variant::parse).toList();
        Path out = Path.of(opt.get("out"));
        boolean realScales = switch (opt.get("indexer-scales")) {
            case "real" -> true;
            case "random" -> false;
            default -> throw new IllegalArgumentException("indexer-scales: real or random, not " + opt.get("indexer-scales"));
        };
        if (!Files.exists(dir.resolve("config.json"))) {
            long t0 = System.nanoTime();
            SyntheticCheckpoint.writeBulk(SyntheticCheckpoint.flash(layers), dir);
            System.out.printf("wrote the %d-layer V4-Flash-shaped slice in %.1f s%n", layers,
                (System.nanoTime() - t0) / 1e9);
        }
        ModelConfig config = ModelConfig.parse(dir.resolve("config.json"));
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int maxContext = Arrays.stream(contexts).max().orElse(8192);
        List<String> rows = new ArrayList<>();
        Map<String, String> settings = Map.of("streams", "2", "cuda-graphs", "false",
            "graph-max-batch", Integer.toString(maxBatch), "graph-max-context", Integer.toString(maxContext));
        long tl = System.nanoTime();
        try (Checkpoint ckpt = Checkpoint.open(dir);
             CudaExecutor gpu = CudaExecutor.load(config, ckpt, new LoadOptions("flash-slice", Math.max(2048, maxBatch),
                 maxBatch, 0, settings), Math.max(2048, maxBatch), maxBatch)) {
            KvLayout layout = KvLayout.of(KvModelShape.of("flash-slice", config), KvPrecision.DEFAULT);
            // window kinds map only the last window's pages (what a long request keeps); compressed kinds all
            Map<PageBucket, Integer> pages = pagesNeeded(layout, maxContext, maxBatch, span);
            gpu.allocateKv(layout, pages);
            gpu.fillKvRandom(7);
            double bandwidth = copyBandwidth();
            System.out.printf(Locale.ROOT, "loaded in %.1f s: weights %.2f GiB, KV pools %.2f GiB %s; device copy"
                    + " bandwidth %.0f GB/s (read + write)%n", (System.nanoTime() - tl) / 1e9,
                gpu.weightBytes() / (double) (1L << 30), gpu.deviceMemory().orElseThrow().kvBytes() / (double) (1L << 30),
                pages, bandwidth / 1e9);
            rows.add(String.format(Locale.ROOT, "{\"kind\":\"setup\",\"layers\":%d,\"ratios\":%s,\"weight_bytes\":%d,"
                    + "\"kv_bytes\":%d,\"copy_bandwidth_bytes_per_s\":%.0f,\"device\":\"%s\",\"warmup\":%d}", layers,
                ratios(config), gpu.weightBytes(), gpu.deviceMemory().orElseThrow().kvBytes(), bandwidth,
                gpu.deviceMemory().orElseThrow().device(), warmup));
            SplittableRandom rnd = new SplittableRandom(1);
            for (int rep = 1; rep <= repeats; rep++) {
                for (Variant v : variants) {
                    gpu.reconfigure(v.streams(), v.graphs());
                    var cap = gpu.graphCapture();
                    if (v.graphs()) {
                        System.out.printf("%s: %d graphs captured in %d ms, %d MiB%s%n", v.name(), cap.graphs(),
                            cap.captureMillis(), cap.bytes() >> 20, cap.stopped() == null ? "" : " (" + cap.stopped() + ")");
                        rows.add(String.format(Locale.ROOT, "{\"kind\":\"capture\",\"repeat\":%d,\"variant\":\"%s\","
                                + "\"graphs\":%d,\"capture_ms\":%d,\"bytes\":%d}", rep, v.name(), cap.graphs(),
                            cap.captureMillis(), cap.bytes()));
                    }
                    for (int context : contexts) {
                        for (int batch : batches) {
                            long replaysBefore = gpu.graphReplays();
                            double[] ms = decode(gpu, filled(gpu, layout, new PageAllocator(layout, pages), batch,
                                context, span, realScales), config, batch, context, steps, warmup, v.argmax(), rnd);
                            boolean replayed = gpu.graphReplays() - replaysBefore >= steps;
                            System.out.printf(Locale.ROOT, "rep %d %-9s context %6d batch %3d: step median %7.3f ms"
                                    + " (min %.3f, max %.3f)%s = %.0f tok/s; host: plan %.3f (its arrays %.3f), issue %.3f,"
                                    + " wait %.3f ms; argmax over the logits %.3f ms%n", rep, v.name(), context, batch,
                                ms[1], ms[0], ms[2], v.graphs() && !replayed ? " [eager: no graph fits]" : "",
                                batch * 1000 / ms[1], ms[4], ms[7], ms[5], ms[6], ms[3]);
                            rows.add(String.format(Locale.ROOT, "{\"kind\":\"decode\",\"repeat\":%d,\"variant\":\"%s\","
                                    + "\"context\":%d,\"batch\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,"
                                    + "\"graph_replayed\":%s,\"argmax_ms\":%.4f,\"plan_ms\":%.4f,\"issue_ms\":%.4f,"
                                    + "\"wait_ms\":%.4f,\"plan_build_ms\":%.4f}", rep, v.name(), context, batch, ms[1],
                                ms[0], ms[2], replayed, ms[3], ms[4], ms[5], ms[6], ms[7]));
                            write(out, rows);
                        }
                    }
                }
            }
            gpu.reconfigure(1, false);
            for (int context : contexts) {
                for (int batch : batches) {
                    Map<StepProfile.Component, Double> p = profile(gpu, filled(gpu, layout, new PageAllocator(layout,
                        pages), batch, context, PROFILE_STEPS, realScales), config, batch, context, rnd);
                    StringBuilder json = new StringBuilder();
                    double total = p.values().stream().mapToDouble(Double::doubleValue).sum();
                    System.out.printf(Locale.ROOT, "profile context %6d batch %3d: %.3f ms of device time%n", context,
                        batch, total);
                    for (var e : p.entrySet()) {
                        System.out.printf(Locale.ROOT, "    %-52s %8.3f ms %5.1f%%%n", e.getKey().label(), e.getValue(),
                            100 * e.getValue() / total);
                        json.append(json.isEmpty() ? "" : ",").append(String.format(Locale.ROOT, "\"%s\":%.4f",
                            e.getKey().label(), e.getValue()));
                    }
                    rows.add(String.format(Locale.ROOT, "{\"kind\":\"profile\",\"context\":%d,\"batch\":%d,"
                        + "\"components_ms\":{%s}}", context, batch, json));
                    write(out, rows);
                }
            }
        }
    }

    /**
     * The requests' block tables for one (context, batch), and the pools filled for them: the masked random fill
     * again (an earlier shape's indexer scales must not stay in pages other kinds own now), then, with
     * {@code realScales}, the indexer keys' block scales in the pages the tables give the indexer.
     */
    private static List<BlockTable[]> filled(CudaExecutor gpu, KvLayout layout, PageAllocator pages, int batch,
                                             int context, int steps, boolean realScales) {
        List<BlockTable[]> tables = tables(pages, batch, context, steps);
        if (realScales) {
            gpu.fillKvRandom(7);
            for (KindGroup g : layout.groups()) {
                if (g.kind() == CacheKind.C4_INDEXER_K) {
                    gpu.fillIndexerKeyScales(g, tables.stream().filter(t -> g.id() < t.length && t[g.id()] != null)
                        .flatMapToInt(t -> Arrays.stream(t[g.id()].pages())).filter(p -> p >= 0).distinct().toArray(), 11);
                }
            }
        }
        return tables;
    }

    /**
     * Decode steps at positions ending at {@code context}: {warm-up, timed}; returns {min, median, max} ms of the
     * step (until its logits are readable on the host), the median ms of one greedy pass over them (the least the
     * engine's sampler does with every row; timed apart, it runs on the engine's thread after the step), and the
     * medians of the host's plan, issue and wait, and of the plan's array building.
     */
    private static double[] decode(CudaExecutor gpu, List<BlockTable[]> tables, ModelConfig config, int batch,
                                   int context, int steps, int warmup, boolean argmaxOnly, SplittableRandom rnd) {
        double[] ms = new double[steps];
        double[] argmax = new double[steps];
        double[][] host = new double[4][steps];
        int start = context - steps - warmup;
        long sink = 0;
        for (int s = 0; s < warmup + steps; s++) {
            StepBatch step = step(tables, batch, start + s, config.vocabSize(), argmaxOnly, rnd);
            long t0 = System.nanoTime();
            StepResult result = gpu.execute(step);
            long t1 = System.nanoTime();
            sink += argmaxRows(result);
            if (s >= warmup) {
                ms[s - warmup] = (t1 - t0) / 1e6;
                argmax[s - warmup] = (System.nanoTime() - t1) / 1e6;
                CudaExecutor.HostTimes h = gpu.lastHostTimes();
                host[0][s - warmup] = h.planNanos() / 1e6;
                host[1][s - warmup] = h.issueNanos() / 1e6;
                host[2][s - warmup] = h.waitNanos() / 1e6;
                host[3][s - warmup] = h.buildNanos() / 1e6;
            }
        }
        if (sink == Long.MIN_VALUE) {
            System.out.println(sink);  // keeps the argmax from being optimised away
        }
        Arrays.sort(ms);
        Arrays.sort(argmax);
        for (double[] h : host) {
            Arrays.sort(h);
        }
        return new double[] {ms[0], ms[steps / 2], ms[steps - 1], argmax[steps / 2], host[0][steps / 2],
            host[1][steps / 2], host[2][steps / 2], host[3][steps / 2]};
    }

    /** Sum over the rows of each row's argmax (the token, where the device returned it). */
    private static long argmaxRows(StepResult r) {
        long sum = 0;
        long[] offsets = r.rowOffsets();
        for (int row = 0; row < r.rows(); row++) {
            sum += offsets[row] < 0 ? r.tokens()[row] : StepResult.argmax(r.logits(), offsets[row], r.vocab());
        }
        return sum;
    }

    /** The median over three profiled steps of each component's device milliseconds. */
    private static Map<StepProfile.Component, Double> profile(CudaExecutor gpu, List<BlockTable[]> tables,
                                                             ModelConfig config, int batch, int context,
                                                             SplittableRandom rnd) {
        List<Map<StepProfile.Component, Double>> runs = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
            var p = gpu.profile(step(tables, batch, context - 4 + s, config.vocabSize(), false, rnd));
            if (s > 0) {
                runs.add(p);
            }
        }
        Map<StepProfile.Component, Double> median = new java.util.EnumMap<>(StepProfile.Component.class);
        for (var c : runs.getFirst().keySet()) {
            double[] v = runs.stream().mapToDouble(m -> m.getOrDefault(c, 0.0)).sorted().toArray();
            median.put(c, v[v.length / 2]);
        }
        return median;
    }

    /**
     * The pages of every kind a request of {@code context} positions needs, {@code batch} times, for a run of
     * {@code steps} timed steps and for the profile after it (whichever writes further back into the window).
     */
    static Map<PageBucket, Integer> pagesNeeded(KvLayout layout, int context, int batch, int steps) {
        return PageAllocator.pagesNeeded(layout, context, batch, windowFrom(context, Math.max(steps, PROFILE_STEPS)));
    }

    /** First position whose window pages a request decoding the last {@code steps} (+ warm-up) positions keeps. */
    static int windowFrom(int context, int steps) {
        return context - steps - WARMUP - WINDOW_MARGIN;
    }

    static List<BlockTable[]> tables(PageAllocator pages, int batch, int context, int steps) {
        List<BlockTable[]> tables = new ArrayList<>();
        for (int r = 0; r < batch; r++) {
            tables.add(BlockTable.fromZero(pages.tables(context, windowFrom(context, steps))));
        }
        return tables;
    }

    /** The same tables in new arrays: a request's tables as the engine hands them after one of them changed. */
    static BlockTable[] renewed(BlockTable[] tables) {
        BlockTable[] out = new BlockTable[tables.length];
        for (int g = 0; g < tables.length; g++) {
            out[g] = tables[g] == null ? null : new BlockTable(tables[g].base(), tables[g].pages().clone());
        }
        return out;
    }

    static StepBatch step(List<BlockTable[]> tables, int batch, int position, int vocab, boolean argmaxOnly,
                          SplittableRandom rnd) {
        List<SequenceChunk> chunks = new ArrayList<>();
        for (int r = 0; r < batch; r++) {
            chunks.add(new SequenceChunk(r, new int[] {rnd.nextInt(2, vocab)}, position, tables.get(r), 0, 0,
                new int[] {0}, argmaxOnly));
        }
        return new StepBatch(chunks);
    }

    /** Device-to-device copy of 2 GiB, best of ten: bytes read plus bytes written per second. */
    private static double copyBandwidth() {
        long bytes = 2L << 30;
        try (DeviceBuffer a = DeviceBuffer.allocate(bytes); DeviceBuffer b = DeviceBuffer.allocate(bytes)) {
            double best = Double.MAX_VALUE;
            for (int i = 0; i < 12; i++) {
                long t0 = System.nanoTime();
                CudaRuntime.check(CudaNative.strata_cuda_memcpy(b.address(), a.address(), bytes, 3), "copy");
                CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "copy");
                if (i >= 2) {
                    best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                }
            }
            return 2.0 * bytes / best;
        }
    }

    private static String ratios(ModelConfig config) {
        return config.schedule().layers().stream().filter(l -> !l.mtp())
            .map(l -> Integer.toString(l.kind().compressRatio())).toList().toString();
    }

    private static int[] ints(String csv) {
        return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static void write(Path out, List<String> rows) throws IOException {
        Files.writeString(out, "[\n" + String.join(",\n", rows) + "\n]\n");
    }

    private ModelDecodeBench() {
    }
}
