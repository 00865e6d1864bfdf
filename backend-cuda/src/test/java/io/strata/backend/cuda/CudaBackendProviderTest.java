package io.strata.backend.cuda;

import io.strata.spi.ProbeResult;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CudaBackendProviderTest {

    private final CudaBackendProvider provider = new CudaBackendProvider();

    @Test
    void identityDoesNotTouchTheDevice() {
        assertThat(provider.identity().id()).isEqualTo("cuda");
        assertThat(provider.identity().name()).contains("CUDA");
    }

    @Test
    void probeNeverThrowsAndExplainsItself() {
        ProbeResult r = provider.probe();
        if (r.available()) {
            assertThat(r.devices()).isNotEmpty();
            assertThat(r.devices().getFirst().properties()).containsKey("computeCapability");
            System.out.println("CUDA available: " + r.devices());
        } else {
            assertThat(r.reason()).startsWith("CUDA unavailable: ").hasSizeGreaterThan("CUDA unavailable: ".length() + 5);
            assertThat(r.devices()).isEmpty();
            System.out.println(r.reason());
        }
        // a second probe gives the same answer: the library is loaded once, not per call
        assertThat(provider.probe()).isEqualTo(r);
    }

    @Test
    void noDriverIsReportedWithCudasOwnMessage() {
        NativeLibrary.Outcome lib = NativeLibrary.load();
        ProbeResult r = provider.probe();
        if (!lib.loaded()) {
            assertThat(r.reason()).contains("native");
        } else if (!r.available() && !HostGpu.present()) {
            // static cudart without a driver: error 35 with CUDA's text
            assertThat(r.reason()).contains("error 35").contains("driver");
        }
    }
}
