package io.strata.backend.cpu;

import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.MainKvDtype;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import org.pf4j.Extension;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CPU backend as the platform sees it: the host is its one device. It is always available
 * where the JVM runs, so the probe only reports what it finds (cores, memory, vector width), and it
 * executes models in pure Java ({@link CpuExecutor}).
 */
@Extension
public class CpuBackendProvider implements BackendProvider, ExecutionBackend {

    /** Share of free host memory offered to KV pages; the rest is left to the JVM and the page cache. */
    private static final double KV_MEMORY_SHARE = 0.5;

    @Override
    public BackendCapabilities capabilities() {
        return new BackendCapabilities((long) (freeMemory() * KV_MEMORY_SHARE),
                java.util.EnumSet.allOf(MainKvDtype.class), java.util.EnumSet.allOf(IndexerKvDtype.class),
                false, 8192, 256);
    }

    @Override
    public ModelExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options) {
        BackendCapabilities caps = capabilities();
        return new CpuExecutor(config, checkpoint, new BackendCapabilities(caps.kvMemoryBytes(), caps.mainKvDtypes(),
                caps.indexerKvDtypes(), false, Math.min(caps.maxBatchTokens(), options.maxBatchTokens()),
                Math.min(caps.maxBatchRequests(), options.maxBatchRequests())));
    }

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
        return ProbeResult.available(List.of(host), Set.of("bf16", "fp8-weights", "fp4-weights", "kv-fp8", "kv-fp4-indexer", "execution"));
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
