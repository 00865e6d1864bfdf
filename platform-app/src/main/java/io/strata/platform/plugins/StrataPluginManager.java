package io.strata.platform.plugins;

import org.pf4j.DefaultPluginManager;
import org.pf4j.JarPluginRepository;
import org.pf4j.PluginRepository;
import org.pf4j.PluginStatusProvider;

import java.nio.file.Path;

/**
 * PF4J's default manager with two changes: enable/disable state comes from the database, and only
 * jars count as plugins (PF4J would also unpack zips and treat sub-folders as exploded plugins,
 * which makes a stray folder in {@code plugins/} look like a broken plugin).
 */
final class StrataPluginManager extends DefaultPluginManager {
    private final PluginStatusProvider statusProvider;

    StrataPluginManager(Path pluginsRoot, PluginStatusProvider statusProvider) {
        // Assigned before super(): the super constructor already calls createPluginStatusProvider().
        this.statusProvider = statusProvider;
        super(pluginsRoot);
    }

    @Override
    protected PluginStatusProvider createPluginStatusProvider() {
        return statusProvider;
    }

    @Override
    protected PluginRepository createPluginRepository() {
        return new JarPluginRepository(getPluginsRoots());
    }
}
