package io.strata.spi;

import org.pf4j.ExtensionPoint;

/**
 * The extension point a hardware backend plugin implements. The platform discovers every
 * {@code BackendProvider} in the plugins folder, asks each to {@link #probe()} its devices and
 * shows the answer in the console; it never assumes a probe succeeds, because a vendor plugin on a
 * host without its driver is the normal case, not an error.
 */
public interface BackendProvider extends ExtensionPoint {

    /** Who this backend is; must not touch the device. */
    BackendIdentity identity();

    /**
     * Looks for devices. Must not throw for "no device" or "driver missing": return
     * {@link ProbeResult#unavailable(String)} with the reason instead.
     */
    ProbeResult probe();
}
