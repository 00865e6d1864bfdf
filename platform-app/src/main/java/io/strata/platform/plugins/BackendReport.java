package io.strata.platform.plugins;

import io.strata.spi.BackendIdentity;
import io.strata.spi.ProbeResult;

/**
 * One {@code BackendProvider} extension of a plugin, as last probed.
 *
 * @param extensionClass the provider's class name
 * @param identity       what it says it is; null when even {@code identity()} failed
 * @param probe          its probe answer; null when probing failed (see {@code error})
 * @param error          why the provider could not be asked, empty when it answered
 */
public record BackendReport(String extensionClass, BackendIdentity identity, ProbeResult probe, String error) {
    public boolean available() {
        return probe != null && probe.available();
    }
}
