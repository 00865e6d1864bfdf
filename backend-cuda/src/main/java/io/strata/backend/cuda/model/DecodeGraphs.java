package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.spi.exec.GraphCapture;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Decode steps as CUDA graphs: one graph per (batch, context) shape of a ladder, captured once after the KV
 * pools exist and replayed for every decode step that fits a shape, so a step costs one plan copy, one
 * launch and one logits copy on the host instead of some forty launches per layer. The graphs share one
 * workspace of their own (sized by an eager run of every shape, then frozen: captured addresses never
 * move) and one plan buffer; a replayed step pads its rows up to the shape's batch (see
 * {@link StepPlan.Capacity}). Prefill, mixed steps and shapes past the ladder run eagerly.
 */
final class DecodeGraphs implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DecodeGraphs.class);

    private record Graph(StepPlan.Capacity shape, long exec, long logits, long nodes) {
    }

    private final DeviceModel model;
    private final DeviceKvCache kv;
    private final StepStreams streams;
    private final Workspace ws = new Workspace();
    private final PlanStaging planHost = new PlanStaging();
    /** context capacity -> batch capacity -> graph */
    private final TreeMap<Integer, TreeMap<Integer, Graph>> graphs = new TreeMap<>();
    private long lastPlanNanos;
    private long lastBuildNanos;
    private GraphCapture summary = GraphCapture.NONE;
    private long replays;

    DecodeGraphs(DeviceModel model, DeviceKvCache kv, StepStreams streams) {
        this.model = model;
        this.kv = kv;
        this.streams = streams;
    }

    /** 1, 2, 4, 8, then steps of 8 up to {@code max} (and {@code max} itself). */
    static List<Integer> batchLadder(int max) {
        List<Integer> out = new ArrayList<>();
        for (int b = 1; b <= Math.min(8, max); b *= 2) {
            out.add(b);
        }
        for (int b = 16; b <= max; b += 8) {
            out.add(b);
        }
        if (out.getLast() != max) {
            out.add(max);
        }
        return out;
    }

    /** Context capacities: 8K, then ×4 while below {@code max}, and {@code max} rounded up to a 256-position page. */
    static List<Integer> contextLadder(int max) {
        int top = (max + 255) / 256 * 256;
        List<Integer> out = new ArrayList<>();
        for (long c = 8192; c < top; c *= 4) {
            out.add((int) c);
        }
        out.add(top);
        return out;
    }

    /**
     * Captures the ladder, smallest shapes first, until the budget's time or memory is spent. A capture that
     * fails is logged and ends capturing: steps then run eagerly past the shapes captured so far.
     */
    void capture(int maxBatch, int maxContext, CaptureBudget budget) {
        List<Integer> batches = batchLadder(maxBatch);
        List<Integer> contexts = contextLadder(maxContext);
        long t0 = System.nanoTime();
        long freeBefore = CudaExecutor.memInfo()[0];
        int count = 0;
        String stopped = null;
        try {
            // an eager step of every shape first grows each buffer to the most any shape needs (some scratch, like
            // split attention's, shrinks as batches grow); then the workspace is frozen and nothing captured moves
            for (int context : contexts) {
                for (int batch : batches) {
                    run(plan(List.of(), new StepPlan.Capacity(batch, context)));
                    // the next shape's plan may move the pinned staging the queued copy still reads
                    streams.synchronize();
                }
            }
            ws.freeze();
            long freeFrozen = CudaExecutor.memInfo()[0];
            outer:
            for (int context : contexts) {
                for (int batch : batches) {
                    stopped = budget.spent((System.nanoTime() - t0) / 1_000_000, freeFrozen - CudaExecutor.memInfo()[0]);
                    if (stopped != null) {
                        break outer;
                    }
                    captureOne(new StepPlan.Capacity(batch, context));
                    count++;
                }
            }
        } catch (RuntimeException e) {
            stopped = "capture failed: " + e.getMessage();
            log.warn("CUDA graph capture stopped after {} graphs, the rest of the decode shapes run eagerly: {}",
                count, e.getMessage());
        }
        long freeAfter = CudaExecutor.memInfo()[0];
        long millis = (System.nanoTime() - t0) / 1_000_000;
        int capturedBatch = graphs.isEmpty() ? 0 : graphs.firstEntry().getValue().lastKey();
        int capturedContext = graphs.isEmpty() ? 0 : graphs.lastKey();
        summary = new GraphCapture(count, capturedBatch, capturedContext, millis, Math.max(0, freeBefore - freeAfter),
            stopped, budget.millis(), budget.bytes());
        log.info("CUDA graphs: {} decode shapes (batch <= {}, context <= {}) captured in {} ms, {} MiB{}", count,
            capturedBatch, capturedContext, millis, summary.bytes() >> 20, stopped == null ? "" : " (" + stopped + ")");
    }

    private void captureOne(StepPlan.Capacity shape) {
        StepPlan plan = plan(List.of(), shape);
        long main = streams.main();
        CudaRuntime.check(CudaNative.strata_stream_synchronize(main), "before capture");
        CudaRuntime.check(CudaNative.strata_graph_begin_capture(main), "cudaStreamBeginCapture");
        long logits;
        try {
            logits = run(plan);
        } catch (RuntimeException e) {
            long[] exec = new long[1];
            long[] nodes = new long[1];
            CudaNative.strata_graph_end_capture(main, exec, nodes);
            if (exec[0] != 0) {
                CudaNative.strata_graph_destroy(exec[0]);
            }
            throw e;
        }
        long[] exec = new long[1];
        long[] nodes = new long[1];
        CudaRuntime.check(CudaNative.strata_graph_end_capture(main, exec, nodes), "cudaStreamEndCapture " + shape);
        graphs.computeIfAbsent(shape.context(), c -> new TreeMap<>())
            .put(shape.batch(), new Graph(shape, exec[0], logits, nodes[0]));
    }

    private StepPlan plan(List<SequenceChunk> chunks, StepPlan.Capacity shape) {
        return StepPlan.build(chunks, shape, kv.layout(), model.ropes(), model.config().vocabSize(), model.window(),
            planHost, ws, streams.main());
    }

    private long run(StepPlan plan) {
        long h = model.trunk(plan, kv, ws, streams);
        return model.headLogits(plan, h, 0, plan.logitRows.length, ws, streams);
    }

    /** The smallest captured shape {@code batch} fits, or null. */
    private Graph find(StepBatch batch) {
        int maxEnd = 0;
        for (var c : batch.chunks()) {
            maxEnd = Math.max(maxEnd, c.endPosition());
        }
        var byContext = graphs.ceilingEntry(maxEnd);
        if (byContext == null) {
            return null;
        }
        var entry = byContext.getValue().ceilingEntry(batch.chunks().size());
        if (entry == null || !entry.getValue().shape().fits(batch.chunks(), kv.layout())) {
            return null;
        }
        return entry.getValue();
    }

    /**
     * Queues a decode step replayed through its graph, and what it returns of its logits through {@code ret}; false
     * when no captured shape fits it (run it eagerly).
     */
    boolean replay(StepBatch batch, LogitReturn ret) {
        Graph g = find(batch);
        if (g == null) {
            return false;
        }
        long t0 = System.nanoTime();
        lastBuildNanos = plan(batch.chunks(), g.shape()).buildNanos;
        lastPlanNanos = System.nanoTime() - t0;
        CudaRuntime.check(CudaNative.strata_graph_launch(g.exec(), streams.main()), "cudaGraphLaunch");
        ret.queue(g.logits(), 0, ret.rows(), streams.main());
        replays++;
        return true;
    }

    /** Host nanoseconds the last {@link #replay} spent building its plan (for the benchmark's breakdown). */
    long lastPlanNanos() {
        return lastPlanNanos;
    }

    /** The part of {@link #lastPlanNanos} spent building the plan's arrays (the rest: its copy, the RoPE gathers). */
    long lastBuildNanos() {
        return lastBuildNanos;
    }

    GraphCapture summary() {
        return summary;
    }

    long replays() {
        return replays;
    }

    long workspaceBytes() {
        return ws.bytes();
    }

    @Override
    public void close() {
        graphs.values().forEach(m -> m.values().forEach(g -> CudaNative.strata_graph_destroy(g.exec())));
        graphs.clear();
        ws.close();
        planHost.close();
    }
}
