package io.strata.platform.workers;

import io.strata.spi.exec.StepResult;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A step result crosses the channel as raw fp32 whatever memory the executor's logits are in: a device backend
 * hands out a native view that its next step overwrites, so the reply must be a copy.
 */
class WorkerProtocolTest {

    @Test
    void logitsInNativeMemoryArriveBitForBitAndOutliveTheView() {
        // -0.0, a NaN with a payload and a subnormal: what a float comparison would let through
        float[] logits = {1.5f, -0.0f, Float.intBitsToFloat(0x7fc00123), Float.NEGATIVE_INFINITY, 3e-42f, -7f};
        ByteBuffer reply;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment view = arena.allocate(StepResult.FLOAT, logits.length);
            MemorySegment.copy(logits, 0, view, StepResult.FLOAT, 0, logits.length);
            reply = WorkerProtocol.result(new StepResult(view, 3, new int[]{0, 1, 2}, 42));
        }
        StepResult r = WorkerProtocol.result(reply);
        assertThat(r.vocab()).isEqualTo(3);
        assertThat(r.rowStart()).containsExactly(0, 1, 2);
        assertThat(r.nanos()).isEqualTo(42);
        assertThat(r.logits().mismatch(MemorySegment.ofArray(logits))).as("first differing byte").isEqualTo(-1);
    }

    @Test
    void tokensOfArgmaxRowsCrossTheChannelBesideThePackedLogits() {
        float[] whole = {0.5f, -1f, 2f, 7f, 8f, 9f};
        StepResult sent = new StepResult(MemorySegment.ofArray(whole), 3, new int[]{0, 1, 3, 4},
            new int[]{-1, 2, -1, 0}, 9);
        StepResult r = WorkerProtocol.result(WorkerProtocol.result(sent));
        assertThat(r.rowStart()).containsExactly(0, 1, 3, 4);
        assertThat(r.tokens()).containsExactly(-1, 2, -1, 0);
        assertThat(r.rowOffsets()).containsExactly(0, -1, 3, -1);
        assertThat(r.row(1, 1)).containsExactly(7f, 8f, 9f);
    }

    @Test
    void aChunksArgmaxOnlyFlagCrossesTheChannel() {
        var tables = new io.strata.spi.exec.BlockTable[]{new io.strata.spi.exec.BlockTable(0, new int[]{3})};
        var batch = new io.strata.spi.exec.StepBatch(java.util.List.of(
            new io.strata.spi.exec.SequenceChunk(1, new int[]{5}, 7, tables, 0, 0, new int[]{0}, true),
            new io.strata.spi.exec.SequenceChunk(2, new int[]{6, 7}, 0, tables, 0, 0, new int[]{1}, false)));
        var back = WorkerProtocol.batch(WorkerProtocol.batch(batch));
        assertThat(back.chunks()).extracting(io.strata.spi.exec.SequenceChunk::argmaxOnly).containsExactly(true, false);
        assertThat(back.chunks().get(1).tokens()).containsExactly(6, 7);
    }
}
