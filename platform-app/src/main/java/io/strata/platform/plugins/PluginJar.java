package io.strata.platform.plugins;

import java.util.List;

/**
 * What a plugin jar says about itself, read without loading any of its classes.
 *
 * @param pluginId       {@code plugin.id}
 * @param version        {@code plugin.version}
 * @param provider       {@code plugin.provider} (may be empty)
 * @param description    {@code plugin.description} (may be empty)
 * @param extensionClasses class names listed in {@code META-INF/extensions.idx}
 */
public record PluginJar(String pluginId, String version, String provider, String description,
                        List<String> extensionClasses) {
    public PluginJar {
        extensionClasses = List.copyOf(extensionClasses);
    }
}
