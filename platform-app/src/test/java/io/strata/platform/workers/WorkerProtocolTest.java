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
}
