package io.strata.backend.cuda.model;

import io.strata.backend.cuda.DeviceBuffer;
import io.strata.backend.cuda.GpuTest;
import io.strata.backend.cuda.RopeTables;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ReferenceModel;
import io.strata.model.config.RopeConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashSet;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A step's RoPE rows gathered on the device from a {@link DeviceRopeTable} are bit for bit the rows the host used
 * to build per step ({@link RopeTables#cosSin}, {@link RopeTables#cosSinAtEntries} at ratios 4 and 128), for both of
 * V4-Flash's rotary configurations, at positions near 0, on entry boundaries and far out — including after the
 * table grew twice (the rows filled before a growth survive the move).
 */
class DeviceRopeTableTest {

    @BeforeAll
    static void gpu() {
        GpuTest.assumeGpu();
    }

    @Test
    void gatheredRowsAreTheHostRowsBeforeAndAfterTheTableGrows() {
        var configs = new LinkedHashSet<RopeConfig>();
        for (LayerSpec spec : ReferenceModel.V4_FLASH.config().schedule().layers()) {
            configs.add(spec.rope());
        }
        assertThat(configs).as("V4-Flash's rotary configurations").hasSizeGreaterThanOrEqualTo(2);
        SplittableRandom rnd = new SplittableRandom(3);
        for (RopeConfig config : configs) {
            try (DeviceRopeTable table = new DeviceRopeTable(config)) {
                // first within the initial 4,096 rows, then out to 300k positions (two doublings past 65,536)
                int[] near = {0, 1, 2, 3, 126, 127, 128, 255, 1023, 1024, 4095};
                check(config, table, near);
                assertThat(table.bytes()).isEqualTo(4096L * 4 * table.rowFloats());
                int[] far = new int[300];
                for (int t = 0; t < far.length; t++) {
                    far[t] = t < near.length ? near[t] : t < 200 ? 299_800 + t : rnd.nextInt(300_000);
                }
                check(config, table, far);
                assertThat(table.bytes()).as("grown by doubling").isEqualTo(524_288L * 4 * table.rowFloats());
            }
        }
    }

    private static void check(RopeConfig config, DeviceRopeTable table, int[] positions) {
        int max = java.util.Arrays.stream(positions).max().orElseThrow();
        long rows = table.ensure(max + 1);
        int n = table.rowFloats();
        int tokens = positions.length;
        try (DeviceBuffer pos = DeviceBuffer.of(positions); DeviceBuffer q = DeviceBuffer.allocate(4L * tokens * n);
             DeviceBuffer c4 = DeviceBuffer.allocate(4L * tokens * n);
             DeviceBuffer c128 = DeviceBuffer.allocate(4L * tokens * n)) {
            q.fill(0x7f);
            c4.fill(0x7f);
            c128.fill(0x7f);
            assertThat(CudaNative.strata_rope_gather(rows, pos.address(), tokens, n, q.address(), c4.address(),
                c128.address(), 0)).isZero();
            assertThat(CudaNative.strata_cuda_synchronize()).isZero();
            float[] freqs = config.inverseFrequencies();
            assertThat(q.downloadFloats(tokens * n)).as("query rows, max position %d", max)
                .containsExactly(RopeTables.cosSin(freqs, positions));
            assertThat(c4.downloadFloats(tokens * n)).as("ratio-4 entry rows")
                .containsExactly(RopeTables.cosSinAtEntries(freqs, positions, 4));
            assertThat(c128.downloadFloats(tokens * n)).as("ratio-128 entry rows")
                .containsExactly(RopeTables.cosSinAtEntries(freqs, positions, 128));
        }
    }
}
