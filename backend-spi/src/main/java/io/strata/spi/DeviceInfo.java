package io.strata.spi;

import java.util.Map;

/**
 * One accelerator (or the host CPU) as a backend sees it.
 *
 * @param index            device ordinal within the backend
 * @param name             e.g. "NVIDIA H200" or "x86_64 (2 cores)"
 * @param totalMemoryBytes memory the device has
 * @param freeMemoryBytes  memory free when probed
 * @param properties       anything else worth showing (compute capability, driver version, ...)
 */
public record DeviceInfo(int index, String name, long totalMemoryBytes, long freeMemoryBytes,
                         Map<String, String> properties) {
    public DeviceInfo {
        properties = Map.copyOf(properties);
    }
}
