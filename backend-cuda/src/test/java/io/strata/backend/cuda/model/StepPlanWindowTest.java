package io.strata.backend.cuda.model;

import io.strata.backend.cpu.bench.PageAllocator;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.SequenceChunk;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The window kinds' block tables a step plan sends hold only the pages the step's kernels touch, so their size
 * does not grow with the context (a dense table from page 0 held 44k SWA pages per request at 128k), and every
 * decode step, at any context, fits a captured graph's fixed table width. No GPU needed.
 */
class StepPlanWindowTest {
    private static final KvLayout LAYOUT = layout();

    private static KvLayout layout() {
        try {
            ModelConfig config = ModelConfig.parse(ModelParityTest.models().resolve("dsv4-tiny-fp8").resolve("config.json"));
            return KvLayout.of(KvModelShape.of("dsv4-tiny-fp8", config), KvPrecision.DEFAULT);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The layout's window kinds (SWA and the compressor states), one per group. */
    private static List<KindLayout> windowKinds() {
        List<KindLayout> out = LAYOUT.groups().stream().map(LAYOUT::kindOf).filter(k -> k.window() != null).toList();
        assertThat(out).isNotEmpty();
        return out;
    }

    @Test
    void aDecodeTokensWindowPagesNeverExceedTheKindsWorstCaseAtAnyContext() {
        for (KindLayout k : windowKinds()) {
            int widest = 0;
            for (int p : new int[] {0, 1, 127, 128, 255, 256, 1000, 8191, 131071, 131072 + 3, 1 << 20}) {
                for (int q = p; q < p + 520; q++) {
                    widest = Math.max(widest, StepPlan.windowSpan(k, decode(q, new BlockTable[0])));
                }
            }
            assertThat(widest).as(k.kind().toString()).isPositive().isLessThanOrEqualTo(k.worstPages());
            // the table starts at the window of the chunk's first position, not at page 0
            assertThat(StepPlan.windowLow(k, decode(131072, new BlockTable[0])))
                .isEqualTo(k.pageIndex(k.window().windowStart(131072)));
        }
    }

    @Test
    void aDecodeStepAt128kFitsAGraphCapturedFor128k() {
        int context = 131072;
        var pages = PageAllocator.pagesNeeded(LAYOUT, context, 1, context - 600);
        BlockTable[] tables = BlockTable.fromZero(new PageAllocator(LAYOUT, pages).tables(context, context - 600));
        SequenceChunk step = decode(context - 10, tables);
        assertThat(new StepPlan.Capacity(8, context).fits(List.of(step), LAYOUT)).isTrue();
        // one position past the captured context does not fit
        assertThat(new StepPlan.Capacity(8, context - 10).fits(List.of(step), LAYOUT)).isFalse();
    }

    @Test
    void aPrefillChunksWindowTableSpansTheChunk() {
        for (KindLayout k : windowKinds()) {
            SequenceChunk chunk = new SequenceChunk(1, new int[2048], 4096, new BlockTable[0], 0, 0, new int[] {2047});
            long lo = StepPlan.windowLow(k, chunk);
            assertThat(lo + StepPlan.windowSpan(k, chunk)).isEqualTo(k.pageIndex(4096 + 2047) + 1);
            assertThat(lo).isLessThanOrEqualTo(k.pageIndex(4096));
        }
    }

    private static SequenceChunk decode(int position, BlockTable[] tables) {
        return new SequenceChunk(1, new int[] {3}, position, tables, 0, 0, new int[] {0});
    }
}
