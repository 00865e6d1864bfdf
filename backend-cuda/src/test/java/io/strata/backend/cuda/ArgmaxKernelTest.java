package io.strata.backend.cuda;

import io.strata.backend.cuda.nat.CudaNative;
import io.strata.spi.exec.StepResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;

import static io.strata.backend.cuda.GpuTest.assumeGpu;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code strata_argmax_rows} is the engine's greedy draw taken on the device: for every row the token
 * {@link StepResult#argmax} picks on the host — ties to the first index (across the kernel's threads and warps, not
 * only within one), a NaN winning only at index 0, -0 tying +0, rows of -inf — at the real vocabulary (129,280: the
 * four-wide path) and at widths that take the scalar path.
 */
class ArgmaxKernelTest {

    @BeforeAll
    static void gpu() {
        assumeGpu();
    }

    @ParameterizedTest
    @CsvSource({"129280, 40", "129280, 1", "1001, 37", "3, 5"})
    void everyRowsTokenIsTheHostRulesArgmax(int vocab, int rows) {
        Random rnd = new Random(vocab * 31L + rows);
        float[] logits = new float[vocab * rows];
        for (int r = 0; r < rows; r++) {
            int o = r * vocab;
            switch (r % 8) {
                // coarse values: many exact ties spread over the whole row
                case 0 -> fill(logits, o, vocab, i -> rnd.nextInt(16) * 0.25f);
                // one maximum repeated at a late and an early index: the early one wins
                case 1 -> {
                    fill(logits, o, vocab, i -> (float) rnd.nextGaussian());
                    logits[o + vocab - 1] = 50f;
                    logits[o + vocab / 3] = 50f;
                }
                case 2 -> {
                    fill(logits, o, vocab, i -> (float) rnd.nextGaussian());
                    logits[o] = Float.NaN;
                }
                case 3 -> fill(logits, o, vocab, i -> rnd.nextInt(5) == 0 ? Float.NaN : (float) rnd.nextGaussian());
                case 4 -> fill(logits, o, vocab, i -> i % 2 == 0 ? -0f : 0f);
                case 5 -> fill(logits, o, vocab, i -> Float.NEGATIVE_INFINITY);
                case 6 -> {
                    fill(logits, o, vocab, i -> (float) rnd.nextGaussian() * 8);
                    logits[o + rnd.nextInt(vocab)] = Float.POSITIVE_INFINITY;
                }
                default -> fill(logits, o, vocab, i -> (float) rnd.nextGaussian() * 8);
            }
        }
        int[] expected = new int[rows];
        MemorySegment host = MemorySegment.ofArray(logits);
        for (int r = 0; r < rows; r++) {
            expected[r] = StepResult.argmax(host, (long) r * vocab, vocab);
        }
        try (DeviceBuffer d = DeviceBuffer.of(logits); DeviceBuffer out = GpuTest.unwritten(4L * rows)) {
            assertThat(CudaNative.strata_argmax_rows(d.address(), rows, vocab, out.address(), 0)).isZero();
            assertThat(CudaNative.strata_cuda_synchronize()).isZero();
            int[] got = out.downloadInts(rows);
            assertThat(got).as("tokens, host rule: %s", Arrays.toString(expected)).isEqualTo(expected);
        }
        if (rows >= 8) {
            assertThat(expected[1]).as("the early copy of the repeated maximum").isEqualTo(vocab / 3);
            assertThat(expected[2]).as("NaN at index 0").isZero();
        }
    }

    private interface Value {
        float at(int i);
    }

    private static void fill(float[] a, int offset, int n, Value v) {
        for (int i = 0; i < n; i++) {
            a[offset + i] = v.at(i);
        }
    }
}
