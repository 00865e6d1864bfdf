package io.strata.backend.cuda;

import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import org.pf4j.Extension;

import java.util.List;
import java.util.Set;

/**
 * The CUDA backend as the platform sees it. Probing loads the native library (once per JVM) and
 * asks the statically linked CUDA runtime for devices; on a host without a driver that answers
 * error 35, which becomes "CUDA unavailable: ..." rather than an exception.
 */
@Extension
public class CudaBackendProvider implements BackendProvider {
    static final String PREFIX = "CUDA unavailable: ";
    /** Kernels in this build need Hopper (sm_90a machine code); later chips JIT the PTX. */
    static final int MIN_MAJOR = 9;

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
            // Only what a model served here would get: the kernels (fused compressor, RoPE + quantisation,
            // lightning indexer, sparse attention) exist, but nothing executes a model with them yet.
            return ProbeResult.available(usable, Set.of("kv-fp8", "kv-fp4-indexer"));
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
