package io.strata.backend.cpu;

import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import org.pf4j.Extension;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CPU backend as the platform sees it: the host is its one device. It is always available
 * where the JVM runs, so the probe only reports what it finds (cores, memory, vector width).
 */
@Extension
public class CpuBackendProvider implements BackendProvider {

    @Override
    public BackendIdentity identity() {
        return new BackendIdentity("cpu", "CPU (Java Vector API)", "Strata", "0.1.0");
    }

    @Override
    public ProbeResult probe() {
        int cores = Runtime.getRuntime().availableProcessors();
        long total = physicalMemory();
        long free = freeMemory();
        String arch = System.getProperty("os.arch");
        DeviceInfo host = new DeviceInfo(0, arch + " (" + cores + " cores)", total, free, Map.of(
                "cores", Integer.toString(cores),
                "os", System.getProperty("os.name") + " " + System.getProperty("os.version"),
                "jvmMaxHeapBytes", Long.toString(Runtime.getRuntime().maxMemory()),
                "java", Runtime.version().toString()));
        return ProbeResult.available(List.of(host), Set.of("bf16", "fp8-weights", "fp4-weights"));
    }

    private static long physicalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Runtime.getRuntime().maxMemory();
    }

    private static long freeMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getFreeMemorySize();
        }
        return Runtime.getRuntime().freeMemory();
    }
}
