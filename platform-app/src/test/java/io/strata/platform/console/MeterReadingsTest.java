package io.strata.platform.console;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class MeterReadingsTest {
    static final double[] BOUNDS = {10, 20, 50, 100};

    @Test
    void percentileInterpolatesInsideTheBucketOfTheDifference() {
        long[] then = {5, 5, 5, 5};
        // 10 new observations: 4 in (0,10], 4 in (10,20], 2 in (20,50]
        long[] now = {9, 13, 15, 15};
        assertThat(MeterReadings.percentile(BOUNDS, now, 15, BOUNDS, then, 5, 0.5)).isCloseTo(12.5, within(1e-9));
        assertThat(MeterReadings.percentile(BOUNDS, now, 15, BOUNDS, then, 5, 0.99)).isCloseTo(20 + 30 * 0.95, within(1e-9));
    }

    @Test
    void noNewObservationsIsNullAndOverflowReportsTheLastBound() {
        long[] c = {1, 2, 3, 3};
        assertThat(MeterReadings.percentile(BOUNDS, c, 3, BOUNDS, c, 3, 0.5)).isNull();
        // 2 observations above the last bound
        assertThat(MeterReadings.percentile(BOUNDS, new long[] {0, 0, 0, 0}, 2, BOUNDS, new long[] {0, 0, 0, 0}, 0, 0.5))
                .isEqualTo(100);
    }
}
