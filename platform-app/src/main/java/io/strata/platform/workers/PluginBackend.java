package io.strata.platform.workers;

import io.strata.spi.BackendProvider;
import io.strata.spi.ProbeResult;
import io.strata.spi.exec.ExecutionBackend;
import org.pf4j.DefaultPluginManager;
import org.pf4j.PluginManager;
import org.pf4j.PluginState;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One backend plugin jar loaded on its own (in a worker process): PF4J loads and starts just that jar, and the
 * plugin's available execution backend is returned. Closing stops and unloads the plugin.
 */
final class PluginBackend implements AutoCloseable {
    private final PluginManager manager;
    private final String pluginId;
    private final ExecutionBackend backend;

    private PluginBackend(PluginManager manager, String pluginId, ExecutionBackend backend) {
        this.manager = manager;
        this.pluginId = pluginId;
        this.backend = backend;
    }

    /**
     * @throws IllegalStateException naming the jar and why: not a plugin, not started, no execution backend,
     *                               or its probe says it cannot run here
     */
    static PluginBackend load(Path jar, String pluginId) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("plugin jar " + jar + " does not exist");
        }
        PluginManager manager = new DefaultPluginManager(List.of(jar.toAbsolutePath().getParent()));
        try {
            String id = manager.loadPlugin(jar);
            if (!pluginId.equals(id)) {
                throw new IllegalStateException("plugin jar " + jar + " holds plugin '" + id + "', not '" + pluginId + "'");
            }
            if (manager.startPlugin(id) != PluginState.STARTED) {
                throw new IllegalStateException("plugin '" + id + "' did not start");
            }
            for (BackendProvider p : manager.getExtensions(BackendProvider.class, id)) {
                if (p instanceof ExecutionBackend exec) {
                    ProbeResult probe = p.probe();
                    if (!probe.available()) {
                        throw new IllegalStateException("backend '" + id + "' is not available here: " + probe.reason());
                    }
                    return new PluginBackend(manager, id, exec);
                }
            }
            throw new IllegalStateException("plugin '" + id + "' offers no execution backend");
        } catch (RuntimeException e) {
            manager.unloadPlugins();
            throw e;
        }
    }

    ExecutionBackend backend() {
        return backend;
    }

    @Override
    public void close() {
        manager.stopPlugin(pluginId);
        manager.unloadPlugins();
    }
}
