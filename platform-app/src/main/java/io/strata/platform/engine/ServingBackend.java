package io.strata.platform.engine;

import org.springframework.stereotype.Component;

import java.util.Optional;

/**
 * Which backend plugin the engine chose at start, so the console can say which one serves and why the
 * others do not. Empty while the engine is offline (its status says why).
 */
@Component
public class ServingBackend {
    private volatile String pluginId;

    void chose(String pluginId) {
        this.pluginId = pluginId;
    }

    public Optional<String> pluginId() {
        return Optional.ofNullable(pluginId);
    }
}
