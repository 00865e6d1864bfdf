package io.strata.backend.cuda;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Everywhere: NCCL is looked up at run time, and where it cannot be used every call says why. */
class NcclAvailabilityTest {

    @Test
    void withoutNcclEveryCallFailsWithTheReason() {
        String why = Nccl.unavailableReason();
        System.out.println("NCCL here: " + (why == null ? "available, version " + Nccl.version() : why));
        if (why != null) {
            assertThat(why).startsWith("NCCL unavailable: ");
            if (NativeLibrary.load().loaded()) {
                assertThat(why).contains("libnccl.so.2"); // the plugin loaded; only the host's NCCL is missing
            }
            assertThatThrownBy(Nccl::uniqueId).isInstanceOf(NcclException.class).hasMessage(why);
            assertThatThrownBy(() -> Nccl.join(1, new byte[Nccl.UNIQUE_ID_BYTES], 0)).isInstanceOf(NcclException.class);
        }
    }
}
