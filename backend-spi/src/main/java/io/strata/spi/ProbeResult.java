package io.strata.spi;

import java.util.List;
import java.util.Set;

/**
 * What a backend found when probed.
 *
 * @param available    whether the backend can run a model here
 * @param reason       why not, when {@code available} is false; a short sentence for operators
 * @param devices      devices found (may be empty)
 * @param capabilities feature words, e.g. {@code kv-fp8}, {@code kv-fp4-indexer}, {@code cuda-graphs}
 */
public record ProbeResult(boolean available, String reason, List<DeviceInfo> devices, Set<String> capabilities) {
    public ProbeResult {
        devices = List.copyOf(devices);
        capabilities = Set.copyOf(capabilities);
    }

    public static ProbeResult available(List<DeviceInfo> devices, Set<String> capabilities) {
        return new ProbeResult(true, "", devices, capabilities);
    }

    public static ProbeResult unavailable(String reason) {
        return new ProbeResult(false, reason, List.of(), Set.of());
    }
}
