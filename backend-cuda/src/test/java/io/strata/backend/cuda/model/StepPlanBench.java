package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ReferenceModel;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The host's share of a decode step without a GPU: building a {@link StepPlan}'s arrays for the real
 * V4-Flash layout (43 layers) and writing them into a host segment, at a graph's fixed shape and eagerly. (The
 * RoPE rows are not built here: the device gathers them from {@link DeviceRopeTable}.) Each shape runs twice:
 * writing every dense table row ("whole", as before the staging remembered its rows) and through
 * {@link StepPlan.DenseRows} ("held"), where each step one request in 64 hands new block-table arrays (a
 * compressed group gains a page every 256 positions) and the others the arrays of the step before.
 * <pre>
 * java -cp ... io.strata.backend.cuda.model.StepPlanBench [contexts=8192,131072] [batches=64,256] [steps=40]
 * </pre>
 */
public final class StepPlanBench {
    private StepPlanBench() {
    }

    public static void main(String[] args) {
        int[] contexts = {8192, 131072};
        int[] batches = {64, 256};
        int steps = 40;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "contexts" -> contexts = Arrays.stream(kv[1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "batches" -> batches = Arrays.stream(kv[1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "steps" -> steps = Integer.parseInt(kv[1]);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        ModelConfig config = ReferenceModel.V4_FLASH.config();
        KvLayout layout = KvLayout.of(KvModelShape.of("flash", config), KvPrecision.DEFAULT);
        System.out.printf("V4-Flash: %d kind groups%n", layout.groups().size());
        System.out.println("| context | batch | shape | dense rows | plan MB | build ms (min / median / max) |");
        System.out.println("|---|---|---|---|---|---|");
        try (Arena arena = Arena.ofConfined()) {
            for (int context : contexts) {
                for (int batch : batches) {
                    // the decode benchmark's requests: compressed kinds mapped from 0, window kinds their last window
                    PageAllocator alloc = new PageAllocator(layout,
                        PageAllocator.pagesNeeded(layout, context, batch, ModelDecodeBench.windowFrom(context, steps)));
                    List<BlockTable[]> tables = ModelDecodeBench.tables(alloc, batch, context, steps);
                    SplittableRandom rnd = new SplittableRandom(1);
                    for (StepPlan.Capacity shape : new StepPlan.Capacity[] {new StepPlan.Capacity(batch, context), null}) {
                        for (boolean held : new boolean[] {false, true}) {
                            StepPlan.DenseRows rows = held ? new StepPlan.DenseRows() : null;
                            double[] ms = new double[steps];
                            long bytes = 0;
                            MemorySegment seg = null;
                            for (int s = 0; s < steps; s++) {
                                for (int r = s % 64; r < batch; r += 64) {  // one request in 64: new arrays
                                    tables.set(r, ModelDecodeBench.renewed(tables.get(r)));
                                }
                                List<SequenceChunk> chunks = ModelDecodeBench.step(tables, batch, context - steps + s - 1,
                                    config.vocabSize(), false, rnd).chunks();
                                long t0 = System.nanoTime();
                                StepPlan.Builder b = new StepPlan.Builder(chunks, shape, layout, config.vocabSize(),
                                    config.attention().slidingWindow());
                                bytes = b.layout();
                                if (seg == null || seg.byteSize() < bytes) {
                                    seg = arena.allocate(bytes, 256);
                                }
                                b.write(seg, rows);
                                ms[s] = (System.nanoTime() - t0) / 1e6;
                            }
                            // the first half warms the JIT up
                            double[] timed = Arrays.copyOfRange(ms, steps / 2, steps);
                            Arrays.sort(timed);
                            System.out.printf("| %dK | %d | %s | %s | %.2f | %.2f / %.2f / %.2f |%n", context / 1024, batch,
                                shape == null ? "eager" : "graph", held ? "held" : "whole", bytes / 1e6, timed[0],
                                timed[timed.length / 2], timed[timed.length - 1]);
                        }
                    }
                }
            }
        }
    }
}
