package io.strata.platform.plugins;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

import java.util.Optional;

/** The persisted enable/disable choice per plugin id (table {@code plugin_state}). */
@Repository
public class PluginStateRepository {
    private final JdbcClient jdbc;

    public PluginStateRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** Empty when the operator never chose: such a plugin is enabled. */
    public Optional<Boolean> enabled(String pluginId) {
        return jdbc.sql("SELECT enabled FROM plugin_state WHERE plugin_id = ?")
                .param(pluginId)
                .query(Boolean.class)
                .optional();
    }

    public void setEnabled(String pluginId, boolean enabled) {
        jdbc.sql("""
                MERGE INTO plugin_state (plugin_id, enabled, updated_at)
                KEY (plugin_id) VALUES (?, ?, CURRENT_TIMESTAMP)
                """)
                .param(pluginId)
                .param(enabled)
                .update();
    }

    /** Forgets the choice (the plugin was removed; a later install of the same id starts enabled). */
    public void forget(String pluginId) {
        jdbc.sql("DELETE FROM plugin_state WHERE plugin_id = ?").param(pluginId).update();
    }
}
