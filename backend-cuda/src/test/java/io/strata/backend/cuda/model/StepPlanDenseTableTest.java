package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ReferenceModel;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compressed kind's dense block table, written a block table at a time into the staging segment, holds exactly
 * what {@link SequenceChunk#page} says of every virtual page: tables that start past page 0, run past the stride or
 * stop short of it, unmapped pages inside, a group a chunk has no table for, and padding rows. And a plan written
 * over the one before it, where rows the segment holds already are skipped, is byte for byte a plan written whole.
 * No GPU needed.
 */
class StepPlanDenseTableTest {

    @Test
    void everyEntryIsThePageTheChunkMapsThere() {
        SplittableRandom rnd = new SplittableRandom(7);
        try (Arena arena = Arena.ofConfined()) {
            for (int trial = 0; trial < 200; trial++) {
                int groups = 1 + rnd.nextInt(3);
                int stride = 1 + rnd.nextInt(40);
                int real = rnd.nextInt(6);
                int rows = real + rnd.nextInt(3);
                List<SequenceChunk> chunks = new ArrayList<>();
                for (int s = 0; s < real; s++) {
                    BlockTable[] tables = new BlockTable[rnd.nextInt(groups + 1)];
                    for (int g = 0; g < tables.length; g++) {
                        if (rnd.nextInt(5) == 0) {
                            continue;  // no table for this group
                        }
                        int[] pages = new int[rnd.nextInt(stride + 10)];
                        for (int i = 0; i < pages.length; i++) {
                            pages[i] = rnd.nextInt(4) == 0 ? -1 : rnd.nextInt(1000);
                        }
                        tables[g] = new BlockTable(rnd.nextInt(3) == 0 ? rnd.nextInt(stride + 5) : 0, pages);
                    }
                    chunks.add(new SequenceChunk(s, new int[] {1}, 100, tables, 0, 0, new int[] {0}));
                }
                for (int g = 0; g < groups; g++) {
                    MemorySegment seg = arena.allocate(4L * Math.max(1, rows * stride), 16);
                    seg.fill((byte) 0x5a);  // whatever was there before: every entry must be written
                    new StepPlan.Dense(chunks, rows, g, stride).write(seg, 0, null);
                    for (int s = 0; s < rows; s++) {
                        for (int v = 0; v < stride; v++) {
                            int expected = s < real ? chunks.get(s).page(g, v) : -1;
                            assertThat(seg.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, (long) s * stride + v))
                                .as("trial %d, group %d, row %d, page %d", trial, g, s, v).isEqualTo(expected);
                        }
                    }
                }
            }
        }
    }

    /**
     * Real V4-Flash layout, six requests at 4K positions; between steps, requests hand new arrays of the same pages,
     * change a page, trade places, leave and come back (padding rows), steps switch between a graph's fixed shape and
     * an eager one, and between two segments. Every array of the plan must come out as a whole write of it.
     */
    @Test
    void planWrittenOverTheOneBeforeIsAWholeWrite() {
        ModelConfig config = ReferenceModel.V4_FLASH.config();
        KvLayout layout = KvLayout.of(KvModelShape.of("flash", config), KvPrecision.DEFAULT);
        int context = 4096;
        int steps = 8;
        int batch = 6;
        PageAllocator alloc = new PageAllocator(layout,
            PageAllocator.pagesNeeded(layout, context, batch, ModelDecodeBench.windowFrom(context, steps)));
        List<BlockTable[]> requests = ModelDecodeBench.tables(alloc, batch, context, steps);
        SplittableRandom rnd = new SplittableRandom(11);
        StepPlan.DenseRows held = new StepPlan.DenseRows();
        long written = 0;
        long rows = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] segments = {arena.allocate(4 << 20, 256), arena.allocate(4 << 20, 256)};
            int current = 0;
            List<BlockTable[]> running = new ArrayList<>(requests);
            for (int step = 0; step < 300; step++) {
                switch (rnd.nextInt(8)) {
                    case 0 -> {                                                                  // new arrays
                        int r = rnd.nextInt(running.size());
                        running.set(r, ModelDecodeBench.renewed(running.get(r)));
                    }
                    case 1 -> {                                                                  // a page changes
                        int r = rnd.nextInt(running.size());
                        BlockTable[] t = ModelDecodeBench.renewed(running.get(r));
                        for (BlockTable bt : t) {
                            if (bt != null && bt.pages().length > 0) {
                                bt.pages()[rnd.nextInt(bt.pages().length)] = rnd.nextInt(1000);
                            }
                        }
                        running.set(r, t);
                    }
                    case 2 -> java.util.Collections.swap(running, rnd.nextInt(running.size()), rnd.nextInt(running.size()));
                    case 3 -> {                                                                  // leave / come back
                        if (running.size() > 1 && rnd.nextBoolean()) {
                            running.remove(rnd.nextInt(running.size()));
                        } else if (running.size() < batch) {
                            running.add(requests.get(rnd.nextInt(requests.size())));
                        }
                    }
                    case 4 -> current = 1 - current;
                    default -> { }  // nothing changes: every dense row is held
                }
                List<SequenceChunk> chunks = ModelDecodeBench.step(running, running.size(), context - steps - 1,
                    config.vocabSize(), false, rnd).chunks();
                StepPlan.Capacity shape = step % 17 == 5 ? null : new StepPlan.Capacity(batch, context);
                StepPlan.Builder over = new StepPlan.Builder(chunks, shape, layout, config.vocabSize(),
                    config.attention().slidingWindow());
                long bytes = over.layout();
                MemorySegment seg = segments[current];
                long before = held.rowsWritten();
                over.write(seg, held);
                written += held.rowsWritten() - before;
                rows += over.denseRows();
                StepPlan.Builder whole = new StepPlan.Builder(chunks, shape, layout, config.vocabSize(),
                    config.attention().slidingWindow());
                assertThat(whole.layout()).isEqualTo(bytes);
                MemorySegment fresh = arena.allocate(bytes, 256);
                fresh.fill((byte) 0x5a);
                whole.write(fresh, null);
                for (Map.Entry<String, Long> e : whole.sizes().entrySet()) {
                    long off = whole.offset(e.getKey());
                    assertThat(seg.asSlice(off, e.getValue()).mismatch(fresh.asSlice(off, e.getValue())))
                        .as("step %d, %s (%d bytes)", step, e.getKey(), e.getValue()).isEqualTo(-1L);
                }
            }
        }
        assertThat(written).as("dense rows written of %d", rows).isPositive().isLessThan(rows / 2);
    }
}
