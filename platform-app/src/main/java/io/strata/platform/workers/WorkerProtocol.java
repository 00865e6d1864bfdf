package io.strata.platform.workers;

import io.strata.kv.IndexerKvDtype;
import io.strata.kv.KvLayout;
import io.strata.kv.MainKvDtype;
import io.strata.kv.PageBucket;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.GraphCapture;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The channels between the platform and a worker process, over {@link FrameChannel} frames. The platform makes
 * two connections to the worker's socket, in this order: the <b>control</b> connection, then the <b>heartbeat</b>
 * connection (the worker tells them apart by that order). On the control connection the worker speaks first
 * ({@link #HELLO}, once it has accepted both); after that the platform sends one request at a time and the worker
 * answers it with a frame of the same type, or {@link #ERROR} (the request failed, the worker lives on). On the
 * heartbeat connection only the worker speaks: a {@link #HEARTBEAT} frame every interval it was started with,
 * from a thread of its own ({@link Heartbeat}).
 *
 * <p>Why a connection and a thread of their own: a beat must not wait for a step. A ping on the control
 * connection would queue behind the step in flight, so a long prefill would look like a hang, or the timeout
 * would have to be as long as the longest step. A separate beating thread answers for the process as a whole —
 * stopped (SIGSTOP), frozen, swapped out or gone — within seconds, idle or busy; a step that runs forever in a
 * process that is otherwise alive is the step timeout's business ({@code strata.engine.worker-step-timeout}).
 *
 * <pre>
 * HELLO          worker → platform  long weightBytes, capabilities
 * CAPABILITIES   → (empty)          ← capabilities
 * ALLOCATE_KV    → string precision, int n, n × (string bucket, int pages)
 *                ← int n, n × (string bucket, int pages, long bytes)
 * EXECUTE        → step batch       ← step result
 * DEVICE_MEMORY  → (empty)          ← bool present [, device memory]
 * CLOSE          → (empty)          ← (empty); the worker then exits 0
 * ERROR          ← string kind ("argument" or "state"), string message
 * HEARTBEAT      worker → platform, heartbeat connection only: long beat number (0, 1, 2, ...)
 *
 * capabilities  = long kvMemoryBytes, int n, n × string mainDtype, int n, n × string indexerDtype,
 *                 bool graphCapture, int maxBatchTokens, int maxBatchRequests
 * step batch    = int chunks, per chunk: long requestId, int startPosition, int sharedPrefixPositions,
 *                 int windowFloor, int[] tokens, int[] logitRows, int groups, groups × (int base, int[] pages)
 * step result   = int vocab, long nanos, int[] rowStart, float[] logits
 * device memory = string device, long total, free, weights, kv, workspace,
 *                 int graphs, int maxBatch, int maxContext, long captureMillis, long bytes, string stopped,
 *                 long budgetMillis, long budgetBytes
 * int[] / float[] = int count, then the values; string = int UTF-8 byte count (-1: null), then the bytes
 * </pre>
 * All little-endian. Logits go as raw fp32 (bit-exact), never as text.
 */
final class WorkerProtocol {
    static final byte HELLO = 1;
    static final byte CAPABILITIES = 2;
    static final byte ALLOCATE_KV = 3;
    static final byte EXECUTE = 4;
    static final byte DEVICE_MEMORY = 5;
    static final byte CLOSE = 6;
    static final byte ERROR = 7;
    static final byte HEARTBEAT = 8;

    private WorkerProtocol() {
    }

    static void putCapabilities(Payload p, BackendCapabilities c) {
        p.putLong(c.kvMemoryBytes()).putInt(c.mainKvDtypes().size());
        c.mainKvDtypes().forEach(d -> p.putString(d.name()));
        p.putInt(c.indexerKvDtypes().size());
        c.indexerKvDtypes().forEach(d -> p.putString(d.name()));
        p.putBoolean(c.graphCapture()).putInt(c.maxBatchTokens()).putInt(c.maxBatchRequests());
    }

    static BackendCapabilities capabilities(ByteBuffer b) {
        long kv = b.getLong();
        Set<MainKvDtype> main = EnumSet.noneOf(MainKvDtype.class);
        for (int i = b.getInt(); i > 0; i--) {
            main.add(MainKvDtype.valueOf(Payload.string(b)));
        }
        Set<IndexerKvDtype> indexer = EnumSet.noneOf(IndexerKvDtype.class);
        for (int i = b.getInt(); i > 0; i--) {
            indexer.add(IndexerKvDtype.valueOf(Payload.string(b)));
        }
        return new BackendCapabilities(kv, main, indexer, Payload.bool(b), b.getInt(), b.getInt());
    }

    static ByteBuffer allocateRequest(KvLayout layout, Map<PageBucket, Integer> pages) {
        Payload p = new Payload().putString(layout.precision().toString()).putInt(pages.size());
        pages.forEach((bucket, n) -> p.putString(bucket.name()).putInt(n));
        return p.done();
    }

    static Map<PageBucket, Integer> allocatePages(ByteBuffer b) {
        Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);
        for (int i = b.getInt(); i > 0; i--) {
            pages.put(PageBucket.valueOf(Payload.string(b)), b.getInt());
        }
        return pages;
    }

    static ByteBuffer poolsReply(KvPools pools) {
        Payload p = new Payload().putInt(pools.pages().size());
        pools.pages().forEach((bucket, n) -> p.putString(bucket.name()).putInt(n)
                .putLong(pools.bytes().getOrDefault(bucket, 0L)));
        return p.done();
    }

    static KvPools pools(KvLayout layout, ByteBuffer b) {
        Map<PageBucket, Integer> pages = new EnumMap<>(PageBucket.class);
        Map<PageBucket, Long> bytes = new EnumMap<>(PageBucket.class);
        for (int i = b.getInt(); i > 0; i--) {
            PageBucket bucket = PageBucket.valueOf(Payload.string(b));
            pages.put(bucket, b.getInt());
            bytes.put(bucket, b.getLong());
        }
        return new KvPools(layout, pages, bytes);
    }

    static ByteBuffer batch(StepBatch batch) {
        Payload p = new Payload(64 + batch.totalTokens() * 8).putInt(batch.chunks().size());
        for (SequenceChunk c : batch.chunks()) {
            p.putLong(c.requestId()).putInt(c.startPosition()).putInt(c.sharedPrefixPositions()).putInt(c.windowFloor())
                    .putInts(c.tokens()).putInts(c.logitRows()).putInt(c.argmaxOnly() ? 1 : 0).putInt(c.blockTables().length);
            for (BlockTable t : c.blockTables()) {
                p.putInt(t.base()).putInts(t.pages());
            }
        }
        return p.done();
    }

    static StepBatch batch(ByteBuffer b) {
        int n = b.getInt();
        List<SequenceChunk> chunks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long id = b.getLong();
            int start = b.getInt();
            int shared = b.getInt();
            int floor = b.getInt();
            int[] tokens = Payload.ints(b);
            int[] rows = Payload.ints(b);
            boolean argmaxOnly = b.getInt() != 0;
            BlockTable[] tables = new BlockTable[b.getInt()];
            for (int g = 0; g < tables.length; g++) {
                int base = b.getInt();
                tables[g] = new BlockTable(base, Payload.ints(b));
            }
            chunks.add(new SequenceChunk(id, tokens, start, tables, shared, floor, rows, argmaxOnly));
        }
        return new StepBatch(chunks);
    }

    /** The reply to {@link #EXECUTE}: the logits are copied out of the executor's view, which its next step reuses. */
    static ByteBuffer result(StepResult r) {
        return new Payload(Math.toIntExact(32 + 4L * r.rowStart().length + 4L * r.tokens().length + r.logits().byteSize()))
                .putInt(r.vocab()).putLong(r.nanos()).putInts(r.rowStart()).putInts(r.tokens()).putFloats(r.logits()).done();
    }

    static StepResult result(ByteBuffer b) {
        int vocab = b.getInt();
        long nanos = b.getLong();
        int[] rowStart = Payload.ints(b);
        int[] tokens = Payload.ints(b);
        return new StepResult(MemorySegment.ofArray(Payload.floats(b)), vocab, rowStart, tokens, nanos);
    }

    static void putDeviceMemory(Payload p, DeviceMemory m) {
        GraphCapture g = m.graphs();
        p.putString(m.device()).putLong(m.totalBytes()).putLong(m.freeBytes()).putLong(m.weightBytes())
                .putLong(m.kvBytes()).putLong(m.workspaceBytes()).putInt(g.graphs()).putInt(g.maxBatch())
                .putInt(g.maxContext()).putLong(g.captureMillis()).putLong(g.bytes()).putString(g.stopped())
                .putLong(g.budgetMillis()).putLong(g.budgetBytes());
    }

    static DeviceMemory deviceMemory(ByteBuffer b) {
        String device = Payload.string(b);
        long total = b.getLong();
        long free = b.getLong();
        long weights = b.getLong();
        long kv = b.getLong();
        long workspace = b.getLong();
        GraphCapture g = new GraphCapture(b.getInt(), b.getInt(), b.getInt(), b.getLong(), b.getLong(), Payload.string(b),
                b.getLong(), b.getLong());
        return new DeviceMemory(device, total, free, weights, kv, workspace, g);
    }

    static ByteBuffer error(RuntimeException e) {
        String message = e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getName() : e.getMessage();
        return new Payload().putString(e instanceof IllegalArgumentException ? "argument" : "state").putString(message).done();
    }

    /** The exception an {@link #ERROR} reply stands for, on the platform side. */
    static RuntimeException error(ByteBuffer b) {
        String kind = Payload.string(b);
        String message = Payload.string(b);
        return "argument".equals(kind) ? new IllegalArgumentException(message) : new IllegalStateException(message);
    }
}
