package io.strata.platform.plugins;

import io.strata.spi.BackendProvider;
import io.strata.spi.ProbeResult;

/**
 * A backend that is ready to use: its plugin is STARTED and its probe said available. This is what
 * the engine picks its backend from ({@link PluginHost#availableBackends()}).
 */
public record LoadedBackend(String pluginId, BackendProvider provider, ProbeResult probe) {
}
