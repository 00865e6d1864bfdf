package io.strata.platform.admin;

import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.GraphCapture;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ServingViewTest {
    private static final long GIB = 1L << 30;

    @Test
    void deviceMemoryLinesSayWhatTheDecodeGraphsTookAndWhyCaptureStopped() {
        var captured = new DeviceMemory("cuda:0 NVIDIA H200", 140 * GIB, 60 * GIB, 29 * GIB, 24 * GIB, GIB,
            new GraphCapture(105, 256, 131072, 9269, 764L << 20, null, 60_000, 8L << 30));
        assertThat(ServingView.memoryLines(captured)).containsExactly(
            "Used by the model: 54.0 GiB (weights 29.0 GiB, KV pools 24.0 GiB, workspace 1.0 GiB)",
            "Free: 60.0 GiB of 140.0 GiB total",
            "Decode graphs: 105 captured (batch up to 256, context up to 131072) in 9269 ms (budget 60000 ms),"
                + " 764.0 MiB (budget 8.0 GiB)");

        var noBudget = new DeviceMemory("cuda:0", 140 * GIB, 60 * GIB, 29 * GIB, 24 * GIB, GIB,
            new GraphCapture(4, 8, 2048, 10, 1L << 20, null));
        assertThat(ServingView.memoryLines(noBudget)).last().asString()
            .isEqualTo("Decode graphs: 4 captured (batch up to 8, context up to 2048) in 10 ms, 1.0 MiB");

        var stopped = new DeviceMemory("cuda:0", 140 * GIB, 60 * GIB, 29 * GIB, 24 * GIB, GIB,
            new GraphCapture(12, 8, 8192, 60001, 100L << 20, "capture time budget of 60000 ms spent", 60_000, 8L << 30));
        assertThat(ServingView.memoryLines(stopped)).last().asString()
            .endsWith("; stopped early: capture time budget of 60000 ms spent");

        var none = new DeviceMemory("cuda:0", 140 * GIB, 60 * GIB, 29 * GIB, 24 * GIB, GIB);
        assertThat(ServingView.memoryLines(none)).hasSize(2);
    }
}
