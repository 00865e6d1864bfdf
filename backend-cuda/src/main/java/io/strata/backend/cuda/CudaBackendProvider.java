package io.strata.backend.cuda;

import io.strata.spi.BackendIdentity;
import io.strata.backend.cuda.model.CudaExecutor;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.MainKvDtype;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.BackendProvider;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import org.pf4j.Extension;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The CUDA backend as the platform sees it. Probing loads the native library (once per JVM) and
 * asks the statically linked CUDA runtime for devices; on a host without a driver that answers
 * error 35, which becomes "CUDA unavailable: ..." rather than an exception.
 */
@Extension
public class CudaBackendProvider implements BackendProvider, ExecutionBackend {
    static final String PREFIX = "CUDA unavailable: ";
    /** Kernels in this build need Hopper (sm_90a machine code); later chips JIT the PTX. */
    static final int MIN_MAJOR = 9;

    /** An accelerator serves before the CPU when {@code strata.backend} names none. */
    static final int PRIORITY = 100;

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** What the GPU offers before a model is loaded: its free memory, the KV formats the kernels read. */
    @Override
    public BackendCapabilities capabilities() {
        long free = 0;
        if (NativeLibrary.load().loaded()) {
            try {
                free = CudaRuntime.devices().stream().findFirst().map(DeviceInfo::freeMemoryBytes).orElse(0L);
            } catch (CudaException e) {
                free = 0;
            }
        }
        return new BackendCapabilities(free, EnumSet.of(MainKvDtype.FP8), EnumSet.of(IndexerKvDtype.FP4), false,
                8192, 256);
    }

    @Override
    public ModelExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options) {
        return CudaExecutor.load(config, checkpoint, options, Math.min(8192, options.maxBatchTokens()),
                Math.min(256, options.maxBatchRequests()));
    }

    @Override
    public BackendIdentity identity() {
        return new BackendIdentity("cuda", "NVIDIA CUDA", "Strata", "0.1.0");
    }

    @Override
    public ProbeResult probe() {
        try {
            NativeLibrary.Outcome lib = NativeLibrary.load();
            if (!lib.loaded()) {
                return ProbeResult.unavailable(PREFIX + lib.reason());
            }
            List<DeviceInfo> devices = CudaRuntime.devices();
            if (devices.isEmpty()) {
                return ProbeResult.unavailable(PREFIX + "no CUDA device found");
            }
            List<DeviceInfo> usable = devices.stream()
                    .filter(d -> major(d) >= MIN_MAJOR)
                    .toList();
            if (usable.isEmpty()) {
                return ProbeResult.unavailable(PREFIX + "no device with compute capability >= " + MIN_MAJOR
                        + ".0 (found " + devices.stream().map(d -> d.name() + " " + d.properties().get("computeCapability")).toList() + ")");
            }
            return ProbeResult.available(usable, Set.of("kv-fp8", "kv-fp4-indexer", "fused-compressor",
                    "fused-qkv-rope-quant", "fused-inverse-rope-quant", "lightning-indexer-fp4",
                    "sparse-attention-fp8", "execution"));
        } catch (CudaException e) {
            return ProbeResult.unavailable(PREFIX + e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            return ProbeResult.unavailable(PREFIX + e);
        }
    }

    private static int major(DeviceInfo d) {
        String cc = d.properties().getOrDefault("computeCapability", "0.0");
        return Integer.parseInt(cc.substring(0, cc.indexOf('.')));
    }
}
