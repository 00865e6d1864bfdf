package io.strata.backend.cuda;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The compressor's RoPE rows hold, for a token that completes an entry, exactly the row of the entry's first
 * position (bit for bit what {@link RopeTables#cosSin} gives there), and zeros for the tokens the kernels skip.
 * No GPU needed.
 */
class RopeTablesTest {

    @Test
    void entryRowsAreTheRowsOfEachCompletedEntrysFirstPosition() {
        SplittableRandom rnd = new SplittableRandom(11);
        float[] freqs = new float[32];
        for (int i = 0; i < freqs.length; i++) {
            freqs[i] = (float) Math.pow(160000, -i / 32.0);
        }
        int[] positions = new int[600];
        for (int t = 0; t < positions.length; t++) {
            // runs of consecutive positions (decode and prefill), near 0 and far out
            positions[t] = t < 300 ? t : 131_000 + rnd.nextInt(1 << 20);
        }
        int n = 2 * freqs.length;
        for (int ratio : new int[] {4, 128}) {
            float[] rows = RopeTables.cosSinAtEntries(freqs, positions, ratio);
            int completing = 0;
            for (int t = 0; t < positions.length; t++) {
                float[] row = Arrays.copyOfRange(rows, t * n, (t + 1) * n);
                int pos = positions[t];
                if ((pos + 1) % ratio == 0) {
                    completing++;
                    float[] expected = RopeTables.cosSin(freqs, new int[] {pos + 1 - ratio});
                    assertThat(row).as("ratio %d, position %d", ratio, pos).containsExactly(expected);
                } else {
                    assertThat(row).as("ratio %d, position %d", ratio, pos).containsOnly(0f);
                }
            }
            assertThat(completing).as("ratio %d: tokens completing an entry", ratio).isGreaterThan(1);
        }
    }
}
