package io.strata.platform.planner;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.platform.engine.kv.KvPoolSizes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * KV capacity arithmetic for any V4 shape, dtype setting and context length: ideal bytes per kind (what
 * the entries themselves take), paged bytes (what our pools really hold, alignment and window
 * granularity included), how many sequences fit a memory budget, and how much memory a pool split
 * strands when the real lengths differ from the target. Pure functions; no Spring.
 */
public final class CapacityPlanner {

    public static final long GIB = 1L << 30;
    public static final long MIB = 1L << 20;
    public static final long ONE_M = 1L << 20;

    private CapacityPlanner() {
    }

    /**
     * Bytes of one kind for one sequence.
     *
     * @param kind       cache kind
     * @param bucket     its pool
     * @param layers     layers holding it
     * @param groups     block tables per request
     * @param idealBytes entries x entry bytes (compressed: {@code L/ratio} per layer; SWA: the last
     *                   {@code min(L,128)} tokens; states: their full window)
     * @param pagedBytes pages x row bytes actually held (window kinds: their worst decode step)
     */
    public record KindBytes(String kind, String bucket, int layers, int groups, long idealBytes, long pagedBytes) {
    }

    /**
     * One sequence of {@code context} positions.
     *
     * @param idealCompressedBytes compressed kinds, ideal
     * @param idealSwaBytes        SWA window, ideal
     * @param idealStateBytes      compressor states at their full window, ideal
     * @param pagedCompressedBytes compressed pages held
     * @param pagedWindowBytes     window and state pages held at the worst decode step (per-request constant)
     */
    public record SequenceReport(String model, String kv, long context, List<KindBytes> kinds, long idealCompressedBytes,
                                 long idealSwaBytes, long idealStateBytes, long pagedCompressedBytes,
                                 long pagedWindowBytes) {

        /** The blog's figure: compressed entries plus the 128-token SWA window, no states. */
        public long blogIdealBytes() {
            return idealCompressedBytes + idealSwaBytes;
        }

        public long pagedTotalBytes() {
            return pagedCompressedBytes + pagedWindowBytes;
        }

        /** Paged compressed bytes over ideal compressed bytes. */
        public double compressedOverhead() {
            return idealCompressedBytes == 0 ? 0 : (double) pagedCompressedBytes / idealCompressedBytes - 1;
        }
    }

    public static SequenceReport sequence(KvLayout layout, long context) {
        if (context <= 0) {
            throw new IllegalArgumentException("context must be positive, got " + context);
        }
        List<KindBytes> kinds = new ArrayList<>();
        long idealC = 0;
        long idealSwa = 0;
        long idealState = 0;
        long pagedC = 0;
        long pagedW = 0;
        long blocks = (context + KvLayout.BLOCK_POSITIONS - 1) / KvLayout.BLOCK_POSITIONS;
        for (KindLayout k : layout.kinds()) {
            long row = layout.bucket(k.bucket()).rowBytes();
            long entries;
            long paged;
            if (k.kind().compressed()) {
                entries = context / k.kind().positionsPerEntry();
                paged = blocks * k.groups().size() * row;
                pagedC += paged;
            } else {
                entries = Math.min(context, k.window().size());
                paged = (long) k.worstPages() * k.groups().size() * row;
                pagedW += paged;
            }
            long ideal = entries * k.format().entryBytes() * k.layers().size();
            switch (k.kind()) {
                case C4A_KV, C128A_KV, C4_INDEXER_K -> idealC += ideal;
                case SWA_KV -> idealSwa += ideal;
                default -> idealState += ideal;
            }
            kinds.add(new KindBytes(k.kind().metricName(), k.bucket().metricName(), k.layers().size(), k.groups().size(),
                    ideal, paged));
        }
        return new SequenceReport(layout.shape().modelId(), layout.precision().toString(), context, kinds, idealC, idealSwa,
                idealState, pagedC, pagedW);
    }

    /**
     * How many sequences of one length fit a budget.
     *
     * @param context         length of every sequence
     * @param memoryBytes     KV budget
     * @param targetContext   length the pools were split for
     * @param perRequestBytes pages one sequence holds at its peak decode step, in bytes
     * @param sequences       sequences that fit all three pools at once
     * @param poolPages       pages per pool
     * @param poolUse         fraction of each pool used when {@code sequences} run
     * @param strandedBytes   budget left unusable because one pool ran out first
     */
    public record FitReport(String model, String kv, long context, long memoryBytes, long targetContext, long perRequestBytes,
                            long sequences, Map<String, Long> poolPages, Map<String, Double> poolUse,
                            long strandedBytes) {
    }

    public static FitReport fit(KvLayout layout, long context, long memoryBytes, long targetContext) {
        if (memoryBytes <= 0) {
            throw new IllegalArgumentException("memory must be positive");
        }
        KvPoolSizes sizes = KvPoolSizes.forBudget(layout, memoryBytes, targetContext);
        long[] demand = KvPoolSizes.demand(layout, context);
        long n = Long.MAX_VALUE;
        long perRequest = 0;
        for (BucketLayout b : layout.buckets()) {
            long d = demand[b.bucket().ordinal()];
            perRequest += d * b.rowBytes();
            if (d > 0) {
                n = Math.min(n, sizes.pages(b.bucket()) / d);
            }
        }
        Map<String, Long> pages = new LinkedHashMap<>();
        Map<String, Double> use = new LinkedHashMap<>();
        for (BucketLayout b : layout.buckets()) {
            long total = sizes.pages(b.bucket());
            pages.put(b.bucket().metricName(), total);
            use.put(b.bucket().metricName(), total == 0 ? 0 : (double) (n * demand[b.bucket().ordinal()]) / total);
        }
        long stranded = sizes.bytes(layout) - n * perRequest;
        return new FitReport(layout.shape().modelId(), layout.precision().toString(), context, memoryBytes, targetContext,
                perRequest, n, pages, use, stranded);
    }

    /**
     * One row of the table against the published figures (1M-token context).
     *
     * @param label      what is measured
     * @param bytes      bytes per sequence
     * @param vsV32      V3.2's bytes divided by these
     * @param blogFigure the published figure, for comparison
     */
    public record SeedRow(String label, long bytes, double vsV32, String blogFigure) {
    }

    /** V3.2 with bf16 MLA (512 + 64 dims) and indexer (128 dims): 1,408 B per token per layer. */
    public static long v32Bytes(long context, int layers) {
        long perTokenPerLayer = (512 + 64) * 2 + 128 * 2;
        return perTokenPerLayer * context * layers;
    }

    public static List<SeedRow> seedsTable() {
        long v32 = v32Bytes(ONE_M, 61);
        KvModelShape blog = KvModelShape.synthetic("v4-30c4a-31c128a", 30, 31);
        long bf16 = sequence(KvLayout.of(blog, KvPrecision.BF16), ONE_M).blogIdealBytes();
        long fp = sequence(KvLayout.of(blog, KvPrecision.DEFAULT), ONE_M).blogIdealBytes();
        return List.of(
                new SeedRow("DeepSeek-V3.2 (61 layers, bf16 MLA + indexer, 1,408 B/token/layer)", v32, 1, "83.9 GiB"),
                new SeedRow("DeepSeek-V4 30 C4A + 31 C128A, bf16", bf16, (double) v32 / bf16, "9.62 GiB (8.7x)"),
                new SeedRow("DeepSeek-V4 30 C4A + 31 C128A, FP8 attention + FP4 indexer", fp, (double) v32 / fp, "~4.9 GiB (~17x)"));
    }

    /**
     * Memory one pool split strands when every sequence has {@code actual} positions but the pools were
     * split for {@code target}.
     */
    public static double stranding(KvLayout layout, long memoryBytes, long target, long actual) {
        FitReport f = fit(layout, actual, memoryBytes, target);
        return (double) f.strandedBytes() / memoryBytes;
    }
}
