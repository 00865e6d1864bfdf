package io.strata.platform.plugins;

import org.pf4j.PluginStatusProvider;
import org.springframework.stereotype.Component;

/**
 * PF4J asks this whether a plugin is disabled while loading it, and tells it when the console
 * enables or disables one; the answer lives in the database so it survives restarts (PF4J's
 * default keeps it in text files next to the jars).
 */
@Component
public class DatabasePluginStatusProvider implements PluginStatusProvider {
    private final PluginStateRepository repository;

    public DatabasePluginStatusProvider(PluginStateRepository repository) {
        this.repository = repository;
    }

    @Override
    public boolean isPluginDisabled(String pluginId) {
        return !repository.enabled(pluginId).orElse(true);
    }

    @Override
    public void disablePlugin(String pluginId) {
        repository.setEnabled(pluginId, false);
    }

    @Override
    public void enablePlugin(String pluginId) {
        repository.setEnabled(pluginId, true);
    }
}
