package io.strata.platform.plugins;

import java.util.List;

/**
 * A plugin (or a jar that failed to become one) as the console and the JSON API show it.
 *
 * @param pluginId    the PF4J id; for a jar that could not be read as a plugin, its file name
 * @param file        file name inside the plugins folder
 * @param version     {@code plugin.version}, empty when unknown
 * @param provider    {@code plugin.provider}, empty when unknown
 * @param description {@code plugin.description}, empty when unknown
 * @param state       PF4J state name: STARTED, DISABLED, FAILED, ...
 * @param reason      why it is FAILED (empty otherwise)
 * @param managed     whether PF4J loaded it, so enable/disable can address it by id
 * @param backends    its backend providers with their probe results (empty unless STARTED)
 */
public record PluginView(String pluginId, String file, String version, String provider, String description,
                         String state, String reason, boolean managed, List<BackendReport> backends) {
    public PluginView {
        backends = List.copyOf(backends);
    }

    public boolean failed() {
        return "FAILED".equals(state);
    }

    public boolean disabled() {
        return "DISABLED".equals(state);
    }
}
