package io.strata.platform.planner;

import io.strata.kv.BucketLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvPrecision;
import tools.jackson.databind.json.JsonMapper;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code java -jar platform-app-*-exec.jar plan [options]}: prints the published-figures table and KV capacity figures
 * without starting Spring. Options:
 * <pre>
 *   --model NAME|PATH     flash, pro, v4-30c4a-31c128a, or a config.json / model folder (repeatable;
 *                         default: flash and pro)
 *   --kv MAIN+INDEXER     fp8+fp4 (default), fp8+fp8, bf16+bf16, ...
 *   --context N           sequence length in positions (default 1048576)
 *   --memory-gib X        also report how many sequences of --context fit in X GiB
 *   --target-context N    length the pools are split for (default: --context)
 *   --align N             layer-page alignment in bytes (default 64; 576 = FlashMLA)
 *   --chunk N             prefill chunk for the transient comparison (default 8192)
 *   --json                machine-readable output
 * </pre>
 */
public final class PlannerCli {

    private PlannerCli() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the subcommand; returns the process exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("plan: " + e.getMessage());
            err.println("usage: plan [--model flash|pro|v4-30c4a-31c128a|PATH]... [--kv fp8+fp4] [--context N]"
                    + " [--memory-gib X] [--target-context N] [--align N] [--chunk N] [--json]");
            return 2;
        }
        try {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("seeds", CapacityPlanner.seedsTable());
            if (!o.json) {
                printSeeds(out);
            }
            List<Object> models = new ArrayList<>();
            for (String name : o.models) {
                ModelChoice.Planned pm = ModelChoice.namedOrFile(name);
                KvLayout layout = KvLayout.of(pm.shape(), o.kv, o.align);
                CapacityPlanner.SequenceReport seq = CapacityPlanner.sequence(layout, o.context);
                VllmReference vllm = VllmReference.of(pm.shape(), pm.trunkLayers(), o.chunk);
                long transientBytes = PrefillTransient.measure(layout, 16L * o.chunk, o.chunk);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("sequence", seq);
                m.put("prefillTransientBytes", transientBytes);
                m.put("vllm", Map.of("layerTuples", vllm.layerTuples(), "blockIdBytes", vllm.blockIdBytes(),
                        "sequenceBytes", vllm.sequenceBytes(o.context), "perRequestBytes", vllm.perRequestBytes(),
                        "prefillTransientBytes", vllm.prefillTransientBytes()));
                CapacityPlanner.FitReport fit = null;
                if (o.memoryGib > 0) {
                    fit = CapacityPlanner.fit(layout, o.context, (long) (o.memoryGib * CapacityPlanner.GIB),
                            o.targetContext > 0 ? o.targetContext : o.context);
                    m.put("fit", fit);
                }
                models.add(m);
                if (!o.json) {
                    printModel(out, layout, seq, vllm, transientBytes, o.chunk, fit);
                }
            }
            json.put("models", models);
            if (o.json) {
                out.println(JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(json));
            }
            return 0;
        } catch (RuntimeException e) {
            err.println("plan: " + e.getMessage());
            return 1;
        }
    }

    private static void printSeeds(PrintStream out) {
        out.println("== Against the published figures: KV bytes of one 1,048,576-token sequence ==");
        out.printf(Locale.ROOT, "%-72s %12s %8s   %s%n", "stack", "GiB", "vs V3.2", "published");
        for (CapacityPlanner.SeedRow r : CapacityPlanner.seedsTable()) {
            out.printf(Locale.ROOT, "%-72s %12.2f %7.1fx   %s%n", r.label(), gib(r.bytes()), r.vsV32(), r.blogFigure());
        }
        out.println();
    }

    private static void printModel(PrintStream out, KvLayout layout, CapacityPlanner.SequenceReport s, VllmReference v,
                                   long transientBytes, int chunk, CapacityPlanner.FitReport fit) {
        out.printf(Locale.ROOT, "== %s, KV %s, align %d B, context %,d ==%n", s.model(), s.kv(), layout.alignment(), s.context());
        for (BucketLayout b : layout.buckets()) {
            out.printf(Locale.ROOT, "  bucket %-6s row %,10d B%n", b.bucket().metricName(), b.rowBytes());
        }
        out.printf(Locale.ROOT, "  %-17s %-7s %6s %6s %8s %8s %8s %14s %14s%n", "kind", "bucket", "layers", "groups",
                "pos/page", "window", "worst", "ideal MiB", "paged MiB");
        for (CapacityPlanner.KindBytes k : s.kinds()) {
            var kl = layout.kinds().stream().filter(x -> x.kind().metricName().equals(k.kind())).findFirst().orElseThrow();
            out.printf(Locale.ROOT, "  %-17s %-7s %6d %6d %8d %8s %8s %14.2f %14.2f%n", k.kind(), k.bucket(), k.layers(),
                    k.groups(), kl.positionsPerPage(), kl.window() == null ? "-" : String.valueOf(kl.window().size()),
                    kl.window() == null ? "-" : String.valueOf(kl.worstPages()), mib(k.idealBytes()), mib(k.pagedBytes()));
        }
        out.printf(Locale.ROOT, "  compressed, ideal            %10.3f GiB%n", gib(s.idealCompressedBytes()));
        out.printf(Locale.ROOT, "  compressed, paged (ours)     %10.3f GiB  (%+.2f%% vs ideal)%n", gib(s.pagedCompressedBytes()),
                100 * s.compressedOverhead());
        out.printf(Locale.ROOT, "  compressed, vLLM 4d51588e fp8 %9.3f GiB  (%+.2f%% vs ideal; %d layer tuples x 47,808 B per block ID)%n",
                gib(v.sequenceBytes(s.context())), 100 * ((double) v.sequenceBytes(s.context()) / s.idealCompressedBytes() - 1),
                v.layerTuples());
        out.printf(Locale.ROOT, "  window+state per request, ideal %7.2f MiB (SWA %.2f + states %.2f)%n",
                mib(s.idealSwaBytes() + s.idealStateBytes()), mib(s.idealSwaBytes()), mib(s.idealStateBytes()));
        out.printf(Locale.ROOT, "  window+state per request, ours  %7.2f MiB (worst decode step)%n", mib(s.pagedWindowBytes()));
        out.printf(Locale.ROOT, "  window+state per request, vLLM  %7.2f MiB (%d block IDs; vLLM accepts only fp8 for V4)%n", mib(v.perRequestBytes()),
                v.perRequestBlockIds());
        out.printf(Locale.ROOT, "  prefill transient per %,d-token chunk: ours %.2f MiB (previous window, any chunk length), vLLM %.2f GiB (%,d block IDs)%n",
                chunk, mib(transientBytes), gib(v.prefillTransientBytes()), v.prefillTransientIds());
        out.printf(Locale.ROOT, "  one sequence, all pages held: %.3f GiB%n", gib(s.pagedTotalBytes()));
        if (fit != null) {
            out.printf(Locale.ROOT, "  fit: %,d sequences of %,d positions in %.1f GiB (pools split for %,d; %.2f GiB per sequence; stranded %.2f GiB)%n",
                    fit.sequences(), fit.context(), gib(fit.memoryBytes()), fit.targetContext(), gib(fit.perRequestBytes()),
                    gib(fit.strandedBytes()));
            out.printf(Locale.ROOT, "       pool pages %s, use at fit %s%n", fit.poolPages(), fmt(fit.poolUse()));
        }
        out.println();
    }

    private static String fmt(Map<String, Double> m) {
        StringBuilder sb = new StringBuilder("{");
        m.forEach((k, v) -> sb.append(sb.length() > 1 ? ", " : "").append(k).append('=').append(String.format(Locale.ROOT, "%.1f%%", 100 * v)));
        return sb.append('}').toString();
    }

    static double gib(long b) {
        return b / (double) CapacityPlanner.GIB;
    }

    static double mib(long b) {
        return b / (double) CapacityPlanner.MIB;
    }

    private static final class Options {
        final List<String> models = new ArrayList<>();
        KvPrecision kv = KvPrecision.DEFAULT;
        long context = CapacityPlanner.ONE_M;
        double memoryGib;
        long targetContext;
        int align = KvLayout.DEFAULT_ALIGNMENT;
        int chunk = 8192;
        boolean json;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--json" -> o.json = true;
                    case "--model", "--kv", "--context", "--memory-gib", "--target-context", "--align", "--chunk" -> {
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException(a + " needs a value");
                        }
                        String v = args[++i];
                        switch (a) {
                            case "--model" -> o.models.add(v);
                            case "--kv" -> o.kv = KvPrecision.parse(v);
                            case "--context" -> o.context = positive(a, v);
                            case "--memory-gib" -> o.memoryGib = Double.parseDouble(v);
                            case "--target-context" -> o.targetContext = positive(a, v);
                            case "--align" -> o.align = (int) positive(a, v);
                            default -> o.chunk = (int) positive(a, v);
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown option '" + a + "'");
                }
            }
            if (o.models.isEmpty()) {
                o.models.add("flash");
                o.models.add("pro");
            }
            return o;
        }

        private static long positive(String name, String v) {
            long n;
            try {
                n = Long.parseLong(v.replace("_", "").replace(",", ""));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " expects an integer, got '" + v + "'");
            }
            if (n <= 0) {
                throw new IllegalArgumentException(name + " must be positive, got " + v);
            }
            return n;
        }
    }
}
