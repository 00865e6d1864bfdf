package io.strata.kv;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The page layout every backend writes to.
 *
 * <p>There are three buckets, one block pool each. Bucket memory is one tensor of {@code pages x rowBytes}.
 * A page index belongs to exactly one {@link KindGroup} at a time; layer slot {@code i} of that group lives
 * at {@code page * rowBytes + i * layerPageBytes}, and the entry of native position {@code p} at
 * {@link #dataOffset} / {@link #scaleOffset}. So a block table per request per group is enough, whatever
 * the number of layers.
 *
 * <p>The compressed kinds fix the three row sizes: C4A main KV (LARGE), C4 indexer keys (MIDDLE) and
 * C128A main KV (SMALL), each with one page per 256 native positions and all its layers in one row, so
 * compressed memory carries no padding beyond the per-layer alignment. Each window kind is then placed in
 * the bucket, group count and positions-per-page that minimise its per-request worst case
 * ({@code groups x worstPages x rowBytes}, plus small surcharges for the host work each group and each
 * page turnover costs per decode step); its pages are at most one row.
 */
public final class KvLayout {

    /** One logical block: the unit of scheduling, accounting and prefix hits, in native positions. */
    public static final int BLOCK_POSITIONS = 256;

    /** Default alignment of a layer page: a cache line and a multiple of 16 B for vector/TMA loads. */
    public static final int DEFAULT_ALIGNMENT = 64;

    private final KvModelShape shape;
    private final KvPrecision precision;
    private final int alignment;
    private final Map<PageBucket, BucketLayout> buckets;
    private final Map<CacheKind, KindLayout> kinds;
    private final List<KindGroup> groups;

    private KvLayout(KvModelShape shape, KvPrecision precision, int alignment, Map<PageBucket, BucketLayout> buckets,
                     Map<CacheKind, KindLayout> kinds, List<KindGroup> groups) {
        this.shape = shape;
        this.precision = precision;
        this.alignment = alignment;
        this.buckets = Collections.unmodifiableMap(buckets);
        this.kinds = Collections.unmodifiableMap(kinds);
        this.groups = List.copyOf(groups);
    }

    public static KvLayout of(KvModelShape shape, KvPrecision precision) {
        return of(shape, precision, DEFAULT_ALIGNMENT);
    }

    /**
     * Builds the layout.
     *
     * @param alignment bytes every layer page is padded to (64 by default; 576 for FlashMLA-style kernels)
     */
    public static KvLayout of(KvModelShape shape, KvPrecision precision, int alignment) {
        if (alignment <= 0) {
            throw new IllegalArgumentException("alignment must be positive: " + alignment);
        }
        return new Builder(shape, precision, alignment).build();
    }

    public KvModelShape shape() {
        return shape;
    }

    public KvPrecision precision() {
        return precision;
    }

    public int alignment() {
        return alignment;
    }

    /** Buckets present, in LARGE, MIDDLE, SMALL order. */
    public List<BucketLayout> buckets() {
        return List.copyOf(buckets.values());
    }

    public BucketLayout bucket(PageBucket bucket) {
        BucketLayout b = buckets.get(bucket);
        if (b == null) {
            throw new IllegalArgumentException("bucket " + bucket + " is not used by " + shape.modelId());
        }
        return b;
    }

    public boolean hasBucket(PageBucket bucket) {
        return buckets.containsKey(bucket);
    }

    /** Kinds present (a model without ratio-128 layers has no C128 kinds), in enum order. */
    public List<KindLayout> kinds() {
        return List.copyOf(kinds.values());
    }

    public boolean hasKind(CacheKind kind) {
        return kinds.containsKey(kind);
    }

    public KindLayout kind(CacheKind kind) {
        KindLayout k = kinds.get(kind);
        if (k == null) {
            throw new IllegalArgumentException(kind + " is not used by " + shape.modelId());
        }
        return k;
    }

    /** Every group, indexed by {@link KindGroup#id()}. */
    public List<KindGroup> groups() {
        return groups;
    }

    public KindLayout kindOf(KindGroup group) {
        return kinds.get(group.kind());
    }

    /**
     * Byte offset, inside the group's bucket tensor, of the values of position {@code position} of one
     * layer, given the physical page the block table maps that position to.
     */
    public long dataOffset(KindGroup group, int modelLayer, int page, long position) {
        KindLayout k = kindOf(group);
        return layerPageOffset(group, k, modelLayer, page) + k.dataOffset(k.entryInPage(position));
    }

    /** Like {@link #dataOffset} for the entry's scales (FP8/FP4 formats). */
    public long scaleOffset(KindGroup group, int modelLayer, int page, long position) {
        KindLayout k = kindOf(group);
        return layerPageOffset(group, k, modelLayer, page) + k.scaleOffset(k.entryInPage(position));
    }

    private long layerPageOffset(KindGroup group, KindLayout k, int modelLayer, int page) {
        int slot = group.slotOf(modelLayer);
        if (slot < 0) {
            throw new IllegalArgumentException("layer " + modelLayer + " is not in group " + group.id() + " (" + group.kind() + ")");
        }
        return (long) page * bucket(group.bucket()).rowBytes() + (long) slot * k.layerPageBytes();
    }

    /** Pages one 256-position logical block costs in each bucket (compressed kinds only). */
    public long compressedBytesPerBlock() {
        long sum = 0;
        for (KindLayout k : kinds.values()) {
            if (k.kind().compressed()) {
                sum += k.groups().size() * bucket(k.bucket()).rowBytes();
            }
        }
        return sum;
    }

    /** Worst-case window and state bytes one request holds at a decode step. */
    public long windowBytesPerRequest() {
        long sum = 0;
        for (KindLayout k : kinds.values()) {
            if (!k.kind().compressed()) {
                sum += (long) k.groups().size() * k.worstPages() * bucket(k.bucket()).rowBytes();
            }
        }
        return sum;
    }

    static long align(long bytes, int alignment) {
        return (bytes + alignment - 1) / alignment * alignment;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("KvLayout[" + shape.modelId() + ", " + precision + ", align " + alignment + "]");
        for (BucketLayout b : buckets.values()) {
            sb.append("\n  ").append(b.bucket()).append(" row ").append(b.rowBytes()).append(" B");
        }
        for (KindLayout k : kinds.values()) {
            sb.append("\n  ").append(k.kind()).append(": ").append(k.bucket()).append(", ")
                    .append(k.groups().size()).append(" group(s) of <=").append(k.groups().getFirst().layers().size())
                    .append(" layers, ").append(k.positionsPerPage()).append(" pos/page, layer page ")
                    .append(k.layerPageBytes()).append(" B");
            if (k.window() != null) {
                sb.append(", window ").append(k.window().size()).append(", worst ").append(k.worstPages()).append(" pages/group");
            }
        }
        return sb.toString();
    }

    /** Builds the layout: compressed kinds first (they define the rows), then window placement. */
    private static final class Builder {
        private final KvModelShape shape;
        private final KvPrecision precision;
        private final int alignment;
        private final Map<PageBucket, BucketLayout> buckets = new EnumMap<>(PageBucket.class);
        private final Map<CacheKind, KindLayout> kinds = new EnumMap<>(CacheKind.class);
        private final List<KindGroup> groups = new ArrayList<>();

        Builder(KvModelShape shape, KvPrecision precision, int alignment) {
            this.shape = shape;
            this.precision = precision;
            this.alignment = alignment;
        }

        KvLayout build() {
            compressed(CacheKind.C4A_KV, PageBucket.LARGE);
            compressed(CacheKind.C4_INDEXER_K, PageBucket.MIDDLE);
            compressed(CacheKind.C128A_KV, PageBucket.SMALL);
            if (buckets.isEmpty()) {
                // A window-only model: size one bucket like a 64-position SWA page of every layer.
                long page = align(format(CacheKind.SWA_KV).rawPageBytes(64), alignment);
                buckets.put(PageBucket.LARGE, new BucketLayout(PageBucket.LARGE, page * shape.allLayers().size()));
            }
            for (CacheKind kind : List.of(CacheKind.SWA_KV, CacheKind.C4_STATE, CacheKind.C128_STATE,
                    CacheKind.C4_INDEXER_STATE)) {
                window(kind);
            }
            // Dense group ids in enum order of kinds, so ids are stable for a given shape.
            Map<CacheKind, KindLayout> ordered = new EnumMap<>(CacheKind.class);
            List<KindGroup> dense = new ArrayList<>();
            for (KindLayout k : kinds.values()) {
                List<KindGroup> renumbered = new ArrayList<>();
                for (KindGroup g : k.groups()) {
                    KindGroup n = new KindGroup(dense.size(), g.kind(), g.bucket(), g.layers());
                    dense.add(n);
                    renumbered.add(n);
                }
                ordered.put(k.kind(), new KindLayout(k.kind(), k.format(), k.layers(), k.bucket(), k.positionsPerPage(),
                        k.entriesPerPage(), k.spanPositions(), k.pagesPerSpan(), k.layerPageBytes(), k.alignment(),
                        k.window(), renumbered, k.worstPages()));
            }
            return new KvLayout(shape, precision, alignment, buckets, ordered, dense);
        }

        private EntryFormat format(CacheKind kind) {
            return switch (kind) {
                case C4A_KV, C128A_KV, SWA_KV -> EntryFormat.main(precision.main(), shape.headDim(), shape.ropeHeadDim());
                case C4_INDEXER_K -> EntryFormat.indexer(precision.indexer(), shape.indexerHeadDim());
                case C4_STATE, C128_STATE -> EntryFormat.compressorState(kind.coff(), shape.headDim());
                case C4_INDEXER_STATE -> EntryFormat.compressorState(kind.coff(), shape.indexerHeadDim());
            };
        }

        private void compressed(CacheKind kind, PageBucket bucket) {
            List<Integer> layers = shape.layersOf(kind);
            if (layers.isEmpty()) {
                return;
            }
            EntryFormat f = format(kind);
            int entries = BLOCK_POSITIONS / kind.positionsPerEntry();
            long layerPage = align(f.rawPageBytes(entries), alignment);
            buckets.put(bucket, new BucketLayout(bucket, layerPage * layers.size()));
            KindGroup g = new KindGroup(0, kind, bucket, layers);
            kinds.put(kind, new KindLayout(kind, f, layers, bucket, BLOCK_POSITIONS, entries, BLOCK_POSITIONS, 1,
                    Math.toIntExact(layerPage), alignment, null, List.of(g), 0));
        }

        private void window(CacheKind kind) {
            List<Integer> layers = shape.layersOf(kind);
            if (layers.isEmpty()) {
                return;
            }
            EntryFormat f = format(kind);
            WindowRule rule = kind.window(shape.slidingWindow());
            Candidate best = null;
            for (BucketLayout b : buckets.values()) {
                for (int g = 1; g <= layers.size(); g++) {
                    Candidate c = candidate(kind, f, rule, b, layers.size(), g);
                    if (c != null && (best == null || c.score() < best.score())) {
                        best = c;
                    }
                }
            }
            if (best == null) {
                throw new IllegalStateException("no bucket can hold one " + kind + " entry (" + f.entryBytes() + " B)");
            }
            List<KindGroup> gs = new ArrayList<>();
            int n = layers.size();
            int from = 0;
            for (int i = 0; i < best.groups; i++) {
                int size = n / best.groups + (i < n % best.groups ? 1 : 0);
                gs.add(new KindGroup(0, kind, best.bucket, layers.subList(from, from + size)));
                from += size;
            }
            kinds.put(kind, new KindLayout(kind, f, layers, best.bucket, best.positionsPerPage,
                    best.positionsPerPage, best.span, best.pagesPerSpan, Math.toIntExact(best.layerPageBytes), alignment,
                    rule, gs, best.worstPages));
        }

        private record Candidate(PageBucket bucket, int groups, int positionsPerPage, int span, int pagesPerSpan,
                                 long layerPageBytes, int worstPages, long cost) {
            /**
             * Bytes, with surcharges for host bookkeeping: 0.5% per group (one more block table to walk per
             * step) and 5% per page turned over per decode step ({@code groups / positionsPerPage}).
             */
            double score() {
                return cost * (1 + 0.005 * groups + 0.05 * groups / positionsPerPage);
            }
        }

        private Candidate candidate(CacheKind kind, EntryFormat f, WindowRule rule, BucketLayout b, int layers, int groups) {
            int perGroup = (layers + groups - 1) / groups;
            long cap = b.rowBytes() / perGroup;
            int t = (int) Math.min(BLOCK_POSITIONS, cap / f.entryBytes());
            while (t > 0 && align(f.rawPageBytes(t), alignment) > cap) {
                t--;
            }
            if (t == 0) {
                return null;
            }
            int span;
            int pagesPerSpan;
            if (rule.stride() == 1) {
                span = BLOCK_POSITIONS;
                pagesPerSpan = (BLOCK_POSITIONS + t - 1) / t;
                t = (BLOCK_POSITIONS + pagesPerSpan - 1) / pagesPerSpan;
            } else if (t >= rule.stride()) {
                t = Integer.highestOneBit(t);
                span = t;
                pagesPerSpan = 1;
            } else {
                span = rule.stride();
                pagesPerSpan = (span + t - 1) / t;
                t = (span + pagesPerSpan - 1) / pagesPerSpan;
            }
            long layerPage = align(f.rawPageBytes(t), alignment);
            int worst = worstPages(rule, t, span, pagesPerSpan);
            long cost = (long) groups * worst * b.rowBytes();
            return new Candidate(b.bucket(), groups, t, span, pagesPerSpan, layerPage, worst, cost);
        }

        /** Most virtual pages covering {@code [windowStart(c), c]} over a full period of positions. */
        static int worstPages(WindowRule rule, int t, int span, int pagesPerSpan) {
            long base = 1L << 20;
            int worst = 0;
            for (long c = base; c < base + 2L * BLOCK_POSITIONS + rule.size(); c++) {
                long lo = rule.windowStart(c);
                long vHi = (c / span) * pagesPerSpan + (c % span) / t;
                long vLo = (lo / span) * pagesPerSpan + (lo % span) / t;
                worst = (int) Math.max(worst, vHi - vLo + 1);
            }
            return worst;
        }
    }
}
