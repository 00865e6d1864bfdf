package io.strata.backend.cuda;

import java.nio.file.Files;
import java.nio.file.Path;

/** Whether this host has an NVIDIA driver at all; GPU tests skip (and say so) only when it has not. */
final class HostGpu {
    private HostGpu() {
    }

    static boolean present() {
        return Files.exists(Path.of("/dev/nvidiactl")) || Files.exists(Path.of("/proc/driver/nvidia/version"));
    }
}
