package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.CacheKind;
import io.strata.kv.KindGroup;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.WindowRule;
import io.strata.model.config.RopeConfig;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the kernels of one step need to know about its requests, built on the host from the
 * {@link StepBatch} and sent to the device in one copy: token ids and positions, which rows belong to
 * which chunk, every kind group's block tables ({@link Table}) and the cache slots this step
 * writes; the RoPE rows of each rotary configuration are then gathered on the device from its
 * {@link DeviceRopeTable}. Layers share it; nothing in it depends on a layer but the group its caches live in.
 */
final class StepPlan {
    /**
     * Rows of a RoPE configuration: at each token's position ({@code query}), and, for a token that completes a
     * compressed entry of ratio 4 or 128, at that entry's first position (zero rows for the other tokens, which the
     * compressors do not read).
     */
    record Rope(long query, long ratio4, long ratio128) {
    }

    /**
     * A kind group's block table on the device: int32 [chunks, stride], -1 unmapped. Compressed kinds: dense from
     * virtual page 0. Window kinds: column 0 holds the row's first virtual page, the rest its pages from there.
     */
    record Table(long address, int stride) {
    }

    /**
     * The fixed shape of a captured decode step: {@code batch} rows of one token each and contexts up to
     * {@code context} positions. A plan built for it has exactly that many rows and chunks (padding rows
     * after the real ones: token 0 at position 0, nothing mapped, nothing written) and table strides,
     * candidate counts and list lengths of the full context, so every launch shape and every device
     * address is the same from one step to the next.
     */
    record Capacity(int batch, int context) {
        /** Whether {@code batch} is a decode step this shape can run: one token and one logit row per chunk. */
        boolean fits(List<SequenceChunk> chunks, KvLayout layout) {
            if (chunks.size() > this.batch) {
                return false;
            }
            for (SequenceChunk c : chunks) {
                if (c.tokens().length != 1 || c.logitRows().length != 1 || c.endPosition() > context) {
                    return false;
                }
                for (KindGroup g : layout.groups()) {
                    KindLayout k = layout.kindOf(g);
                    boolean tooWide = k.window() != null ? windowSpan(k, c) > k.worstPages()
                        : g.id() < c.blockTables().length && c.blockTables()[g.id()] != null
                            && c.blockTables()[g.id()].end() > stride(layout, g);
                    if (tooWide) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** Dense table stride of a compressed kind at this context. */
        int stride(KvLayout layout, KindGroup g) {
            return Math.toIntExact(layout.kindOf(g).pageIndex(context - 1) + 1);
        }
    }

    /** First virtual page of a window kind that chunk {@code c}'s kernels read: that of its first position's window. */
    static long windowLow(KindLayout k, SequenceChunk c) {
        return k.pageIndex(k.window().windowStart(c.startPosition()));
    }

    /** Virtual pages of a window kind from {@link #windowLow} through the chunk's last position. */
    static int windowSpan(KindLayout k, SequenceChunk c) {
        return Math.toIntExact(k.pageIndex(c.endPosition() - 1) + 1 - windowLow(k, c));
    }

    final int tokens;
    final int chunks;
    final int[] logitRows;
    /** Largest (pos+1)/4 (indexer candidates) and (pos+1)/128 (C128A entries) over the step's tokens. */
    final int maxCandidates4;
    final int maxVisible128;
    final long tokenIds;
    final long positions;
    final long tokenSeq;
    final long seqFirstToken;
    final long seqFirstPos;
    final long seqNumTokens;
    final long windowFloor;
    final long logitRowsDevice;
    /** int64 [tokens]: 0, 1, 2, ... — this step's KV entries staged in row order. */
    final long stagingSlots;
    private final Table[] tables;
    /** Per group id: int64 [tokens] cache slots this step writes (window kinds: -1 where not kept). */
    private final Map<Integer, Long> writeSlots = new HashMap<>();
    private final Map<RopeConfig, Rope> ropes = new HashMap<>();
    /** Host nanoseconds spent building the arrays into the staging, before its copy and the RoPE gathers. */
    final long buildNanos;

    private StepPlan(Builder b, long base, Map<RopeConfig, Rope> gathered, long buildNanos) {
        this.buildNanos = buildNanos;
        tokens = b.tokens;
        chunks = b.chunks;
        logitRows = b.logitRows;
        maxCandidates4 = b.maxCandidates4;
        maxVisible128 = b.maxVisible128;
        tokenIds = base + b.offset("tokens");
        positions = base + b.offset("positions");
        tokenSeq = base + b.offset("tokenSeq");
        seqFirstToken = base + b.offset("seqFirstToken");
        seqFirstPos = base + b.offset("seqFirstPos");
        seqNumTokens = base + b.offset("seqNumTokens");
        windowFloor = base + b.offset("windowFloor");
        logitRowsDevice = base + b.offset("logitRows");
        stagingSlots = base + b.offset("stagingSlots");
        tables = new Table[b.tableStrides.length];
        for (int g = 0; g < tables.length; g++) {
            tables[g] = new Table(base + b.offset("table" + g), b.tableStrides[g]);
        }
        for (int g : b.writeGroups) {
            writeSlots.put(g, base + b.offset("write" + g));
        }
        ropes.putAll(gathered);
    }

    Table table(KindGroup g) {
        return tables[g.id()];
    }

    long writeSlots(KindGroup g) {
        Long a = writeSlots.get(g.id());
        if (a == null) {
            throw new IllegalStateException("no write slots planned for group " + g.id() + " (" + g.kind() + ")");
        }
        return a;
    }

    Rope rope(RopeConfig r) {
        return ropes.get(r);
    }

    /**
     * Builds the plan and copies it to {@code workspace}'s "plan" buffer. Checks what the kernels cannot:
     * token ids inside the vocabulary, and that every cache slot the step must write is mapped.
     */
    static StepPlan build(StepBatch batch, KvLayout layout, List<DeviceRopeTable> ropes, int vocab, int window,
                          PlanStaging host, Workspace workspace, long stream) {
        return build(batch.chunks(), null, layout, ropes, vocab, window, host, workspace, stream);
    }

    /**
     * As {@link #build(StepBatch, KvLayout, List, int, int, PlanStaging, Workspace, long)}, padded to
     * {@code capacity} when it is not null (no chunks at all: a step of padding rows only). After the plan's copy
     * it queues, on {@code stream}, the gather of each rotary configuration's rows (outside any graph: the tables
     * may move as they grow).
     */
    static StepPlan build(List<SequenceChunk> chunks, Capacity capacity, KvLayout layout, List<DeviceRopeTable> ropes,
                          int vocab, int window, PlanStaging host, Workspace workspace, long stream) {
        long t0 = System.nanoTime();
        if (capacity != null && !capacity.fits(chunks, layout)) {
            throw new IllegalArgumentException("step does not fit the decode shape " + capacity);
        }
        Builder b = new Builder(chunks, capacity, layout, vocab, window);
        long bytes = b.layout();
        var seg = host.segment(bytes);
        b.write(seg, host.held());
        long built = System.nanoTime() - t0;
        long dev = workspace.get("plan", bytes);
        host.copyTo(dev, bytes, stream);
        Map<RopeConfig, Rope> gathered = new HashMap<>();
        long positions = dev + b.offset("positions");
        for (int i = 0; i < ropes.size(); i++) {
            DeviceRopeTable t = ropes.get(i);
            long rowBytes = 4L * b.tokens * t.rowFloats();
            Rope r = new Rope(workspace.get("rope" + i + "q", rowBytes), workspace.get("rope" + i + "c4", rowBytes),
                workspace.get("rope" + i + "c128", rowBytes));
            CudaRuntime.check(CudaNative.strata_rope_gather(t.ensure(b.maxPosition + 1), positions, b.tokens,
                t.rowFloats(), r.query(), r.ratio4(), r.ratio128(), stream), "RoPE rows");
            gathered.put(t.config(), r);
        }
        return new StepPlan(b, dev, gathered, built);
    }

    /** Lays the arrays out 256-byte aligned and writes them into the host staging segment. */
    static final class Builder {
        final int tokens;
        final int chunks;
        final int[] logitRows;
        int maxCandidates4;
        int maxVisible128;
        final int[] tableStrides;
        final List<Integer> writeGroups = new ArrayList<>();
        /** Highest position of the step's tokens (0 for padding rows): the RoPE tables must reach it. */
        int maxPosition;
        private final Map<String, Object> arrays = new java.util.LinkedHashMap<>();
        private final Map<String, Long> offsets = new HashMap<>();

        Builder(List<SequenceChunk> cs, Capacity capacity, KvLayout layout, int vocab, int window) {
            int real = cs.size();
            chunks = capacity == null ? real : capacity.batch();
            tokens = capacity == null ? cs.stream().mapToInt(c -> c.tokens().length).sum() : capacity.batch();
            int[] ids = new int[tokens];
            int[] pos = new int[tokens];
            int[] seq = new int[tokens];
            int[] first = new int[chunks];
            int[] firstPos = new int[chunks];
            int[] num = new int[chunks];
            int[] floor = new int[chunks];
            logitRows = new int[capacity == null ? cs.stream().mapToInt(c -> c.logitRows().length).sum()
                : capacity.batch()];
            long[] staging = new long[tokens];
            int row = 0;
            int lr = 0;
            for (int s = 0; s < real; s++) {
                SequenceChunk c = cs.get(s);
                first[s] = row;
                firstPos[s] = c.startPosition();
                num[s] = c.tokens().length;
                floor[s] = c.windowFloor();
                for (int r : c.logitRows()) {
                    logitRows[lr++] = row + r;
                }
                for (int t = 0; t < c.tokens().length; t++) {
                    int id = c.tokens()[t];
                    if (id < 0 || id >= vocab) {
                        throw new IllegalArgumentException("request " + c.requestId() + ": token id " + id
                            + " outside the vocabulary [0, " + vocab + ")");
                    }
                    ids[row] = id;
                    pos[row] = c.startPosition() + t;
                    seq[row] = s;
                    staging[row] = row;
                    maxPosition = Math.max(maxPosition, pos[row]);
                    maxCandidates4 = Math.max(maxCandidates4, (pos[row] + 1) / 4);
                    maxVisible128 = Math.max(maxVisible128, (pos[row] + 1) / 128);
                    row++;
                }
            }
            // padding rows of a fixed decode shape: their own chunk at position 0, no page mapped
            for (int s = real; s < chunks; s++, row++) {
                first[s] = row;
                num[s] = 1;
                seq[row] = s;
                staging[row] = row;
                logitRows[lr++] = row;
            }
            if (capacity != null) {
                maxCandidates4 = capacity.context() / 4;
                maxVisible128 = capacity.context() / 128;
            }
            arrays.put("tokens", ids);
            arrays.put("positions", pos);
            arrays.put("tokenSeq", seq);
            arrays.put("seqFirstToken", first);
            arrays.put("seqFirstPos", firstPos);
            arrays.put("seqNumTokens", num);
            arrays.put("windowFloor", floor);
            arrays.put("logitRows", logitRows.length == 0 ? new int[1] : logitRows);
            arrays.put("stagingSlots", staging);
            tableStrides = new int[layout.groups().size()];
            for (KindGroup g : layout.groups()) {
                KindLayout k = layout.kindOf(g);
                if (k.window() != null) {
                    int[] table = windowTable(cs, capacity, k, g);
                    tableStrides[g.id()] = table.length / chunks;
                    arrays.put("table" + g.id(), table);
                } else {
                    Dense table = new Dense(cs, chunks, g.id(),
                        capacity != null ? capacity.stride(layout, g) : widestTable(cs, g));
                    tableStrides[g.id()] = table.stride();
                    arrays.put("table" + g.id(), table);
                }
                if (g.kind() == CacheKind.SWA_KV || g.kind().compressed()) {
                    arrays.put("write" + g.id(), g.kind().compressed() ? entrySlots(cs, k, g) : windowSlots(cs, k, g, window));
                    // padding rows (after the real ones) keep the -1 the slot arrays start with
                    writeGroups.add(g.id());
                }
            }
        }

        /**
         * Window kinds: per chunk its first virtual page, then the pages from there to its last position. A dense
         * table from page 0 would grow with the context (a window page holds a few positions: 44k pages per
         * request at 128k), while the kernels only touch the chunk's window ({@link WindowRule#windowStart} of
         * its first position) and its own positions: at most {@link KindLayout#worstPages} for a decode token.
         */
        private int[] windowTable(List<SequenceChunk> cs, Capacity capacity, KindLayout k, KindGroup g) {
            int span = 1;
            if (capacity != null) {
                span = Math.max(span, k.worstPages());
            } else {
                for (SequenceChunk c : cs) {
                    span = Math.max(span, windowSpan(k, c));
                }
            }
            int stride = 1 + span;
            int[] table = new int[chunks * stride];
            java.util.Arrays.fill(table, -1);  // padding rows: every page unmapped, whatever their first page says
            for (int s = 0; s < cs.size(); s++) {
                SequenceChunk c = cs.get(s);
                long lo = windowLow(k, c);
                table[s * stride] = Math.toIntExact(lo);
                for (int i = 0, n = windowSpan(k, c); i < n; i++) {
                    table[s * stride + 1 + i] = c.page(g.id(), lo + i);
                }
            }
            return table;
        }

        /** The longest of the chunks' block tables of group {@code g} (at least 1). */
        private static int widestTable(List<SequenceChunk> cs, KindGroup g) {
            int stride = 1;
            for (SequenceChunk c : cs) {
                if (g.id() < c.blockTables().length && c.blockTables()[g.id()] != null) {
                    stride = Math.max(stride, c.blockTables()[g.id()].end());
                }
            }
            return stride;
        }

        /** The SWA slot of every token: mapped ones are written; the chunk's last window must be mapped. */
        private long[] windowSlots(List<SequenceChunk> cs, KindLayout k, KindGroup g, int window) {
            long[] out = new long[tokens];
            java.util.Arrays.fill(out, -1);
            int row = 0;
            for (SequenceChunk c : cs) {
                int keepFrom = Math.max(c.startPosition(), c.endPosition() - (window - 1));
                for (int t = 0; t < c.tokens().length; t++, row++) {
                    int p = c.startPosition() + t;
                    int page = c.page(g.id(), k.pageIndex(p));
                    if (page < 0 && p >= keepFrom) {
                        throw new IllegalArgumentException("request " + c.requestId() + ": window position " + p
                            + " (group " + g.id() + ", " + g.kind() + ") maps to virtual page " + k.pageIndex(p)
                            + ", which its block table does not map");
                    }
                    out[row] = page < 0 ? -1 : (long) page * k.entriesPerPage() + k.entryInPage(p);
                }
            }
            return out;
        }

        /**
         * The compressed entry each token completes ((pos+1) % ratio == 0), or -1: no entry, or an entry
         * inside the shared prefix (read-only pages).
         */
        private long[] entrySlots(List<SequenceChunk> cs, KindLayout k, KindGroup g) {
            int ratio = g.kind().ratio();
            long[] out = new long[tokens];
            java.util.Arrays.fill(out, -1);
            int row = 0;
            for (SequenceChunk c : cs) {
                int firstWritable = (c.sharedPrefixPositions() + ratio - 1) / ratio;
                for (int t = 0; t < c.tokens().length; t++, row++) {
                    int p = c.startPosition() + t;
                    out[row] = -1;
                    if ((p + 1) % ratio != 0 || (p + 1) / ratio - 1 < firstWritable) {
                        continue;
                    }
                    long entryPos = (long) ((p + 1) / ratio - 1) * ratio;
                    int page = c.page(g.id(), k.pageIndex(entryPos));
                    if (page < 0) {
                        throw new IllegalArgumentException("request " + c.requestId() + ": compressed entry at position "
                            + entryPos + " (" + g.kind() + ") maps to virtual page " + k.pageIndex(entryPos)
                            + ", which its block table does not map");
                    }
                    out[row] = (long) page * k.entriesPerPage() + k.entryInPage(entryPos);
                }
            }
            return out;
        }

        long offset(String name) {
            return offsets.get(name);
        }

        /** Rows of all dense tables of the plan. */
        long denseRows() {
            return arrays.values().stream().filter(a -> a instanceof Dense).mapToLong(a -> ((Dense) a).rows()).sum();
        }

        /** The arrays' names and their sizes in bytes (without the alignment padding after each), in layout order. */
        Map<String, Long> sizes() {
            Map<String, Long> out = new java.util.LinkedHashMap<>();
            arrays.forEach((name, a) -> out.put(name, bytes(a)));
            return out;
        }

        long layout() {
            long off = 0;
            for (var e : arrays.entrySet()) {
                offsets.put(e.getKey(), off);
                off += (bytes(e.getValue()) + 255) / 256 * 256;
            }
            return Math.max(off, 256);
        }

        private static long bytes(Object a) {
            return switch (a) {
                case int[] i -> 4L * i.length;
                case long[] l -> 8L * l.length;
                case float[] f -> 4L * f.length;
                case Dense d -> 4L * d.rows() * d.stride();
                default -> throw new IllegalStateException();
            };
        }

        /**
         * Writes the plan into {@code seg}. {@code held}, when not null, is what the segment holds from the plan
         * written before: dense table rows it already holds are not written again (see {@link DenseRows}).
         */
        void write(MemorySegment seg, DenseRows held) {
            boolean keep = held != null && held.holds(seg, offsets, tableStrides, chunks);
            for (var e : arrays.entrySet()) {
                long off = offsets.get(e.getKey());
                switch (e.getValue()) {
                    case int[] i -> MemorySegment.copy(i, 0, seg, ValueLayout.JAVA_INT_UNALIGNED, off, i.length);
                    case long[] l -> MemorySegment.copy(l, 0, seg, ValueLayout.JAVA_LONG_UNALIGNED, off, l.length);
                    case float[] f -> MemorySegment.copy(f, 0, seg, ValueLayout.JAVA_FLOAT_UNALIGNED, off, f.length);
                    case Dense d -> {
                        int n = d.write(seg, off, held == null ? null : held.rows(d.group(), d.rows(), keep));
                        if (held != null) {
                            held.countWritten(n);
                        }
                    }
                    default -> throw new IllegalStateException();
                }
            }
        }
    }

    /**
     * A compressed kind's block table, int32 [rows, stride]: entry {@code v} of row {@code s} is
     * {@link SequenceChunk#page}{@code (group, v)} of chunk {@code s} (rows past the chunks, padding, all -1). Written
     * a block table at a time straight into the staging segment: at 128K positions and batch 256 the compressed
     * kinds' tables hold about half a million entries per step.
     */
    record Dense(List<SequenceChunk> chunks, int rows, int group, int stride) {
        /** Row {@code s}'s block table when it maps anything below the stride, else null (the row is all -1). */
        BlockTable table(int s) {
            if (s >= chunks.size()) {
                return null;
            }
            BlockTable[] tables = chunks.get(s).blockTables();
            BlockTable t = group < tables.length ? tables[group] : null;
            return t != null && t.base() < stride ? t : null;
        }

        /**
         * Writes every row at byte {@code off} of {@code seg}, but a row whose table {@code held} says the segment
         * holds there already (its pages array, which nobody modifies, and its base); {@code held} then records the
         * rows written. Null: every row. Returns the number of rows written.
         */
        int write(MemorySegment seg, long off, BlockTable[] held) {
            int written = 0;
            for (int s = 0; s < rows; s++) {
                BlockTable t = table(s);
                if (held != null && held[s] != null && same(held[s], t)) {
                    continue;
                }
                long row = off + 4L * s * stride;
                seg.asSlice(row, 4L * stride).fill((byte) -1);
                if (t != null) {
                    MemorySegment.copy(t.pages(), 0, seg, ValueLayout.JAVA_INT_UNALIGNED, row + 4L * t.base(),
                        Math.min(t.end(), stride) - t.base());
                }
                if (held != null) {
                    held[s] = t == null ? DenseRows.UNMAPPED : t;
                }
                written++;
            }
            return written;
        }

        private static boolean same(BlockTable held, BlockTable t) {
            return t == null ? held == DenseRows.UNMAPPED : held.pages() == t.pages() && held.base() == t.base();
        }
    }

    /**
     * What the dense tables of the plan last written into a staging segment hold, row by row: the block table each
     * row was written from. A decode step hands the same pages array ({@code PageTable.snapshot}) for a request
     * whose table did not change, and most steps change few rows (a compressed group gains a page every 256
     * positions), so the rows a segment holds already are not written again. Valid only while the next plan is laid
     * out the same way in the same segment: any other layout (another shape, another segment) forgets it all.
     */
    static final class DenseRows {
        /** A row written as all -1. */
        static final BlockTable UNMAPPED = new BlockTable(0, new int[0]);
        private long address = -1;
        private Map<String, Long> offsets = Map.of();
        private int[] strides = new int[0];
        private int chunks = -1;
        private final Map<Integer, BlockTable[]> rows = new HashMap<>();
        /** Dense rows written through this memory so far (the others were held). */
        private long written;

        /**
         * Whether {@code seg} holds a plan laid out as {@code offsets} with these table strides and rows; if not,
         * forgets what it held.
         */
        boolean holds(MemorySegment seg, Map<String, Long> offsets, int[] strides, int chunks) {
            if (seg.address() == address && chunks == this.chunks && Arrays.equals(strides, this.strides)
                && offsets.equals(this.offsets)) {
                return true;
            }
            address = seg.address();
            this.offsets = Map.copyOf(offsets);
            this.strides = strides.clone();
            this.chunks = chunks;
            rows.clear();
            return false;
        }

        long rowsWritten() {
            return written;
        }

        void countWritten(int rows) {
            written += rows;
        }

        /** The rows of group {@code group}'s table (all unknown unless {@code keep}), to read and update. */
        BlockTable[] rows(int group, int count, boolean keep) {
            BlockTable[] r = keep ? rows.get(group) : null;
            if (r == null || r.length != count) {
                r = new BlockTable[count];
                rows.put(group, r);
            }
            return r;
        }
    }
}
