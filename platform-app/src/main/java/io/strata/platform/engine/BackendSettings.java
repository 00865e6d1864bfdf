package io.strata.platform.engine;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The backend properties of the platform: {@code strata.backend} (which plugin serves) and each backend's
 * own settings {@code strata.<plugin id>.<key>}, handed to it as {@code LoadOptions.settings()} keyed by
 * {@code <key>}. Every property source counts, highest precedence first (command line, environment,
 * application.yml, ...), with Spring's relaxed names: {@code --strata.cuda.memory-fraction=0.8},
 * {@code strata.cuda.memory-fraction: 0.8} in YAML and the environment variable
 * {@code STRATA_CUDA_MEMORY_FRACTION=0.8} all give {@code memory-fraction} (in an environment variable the
 * underscores after the prefix become dashes, since backend keys are flat).
 */
final class BackendSettings {
    static final String BACKEND = "strata.backend";

    private BackendSettings() {
    }

    /** {@code strata.backend}, or null when unset. */
    static String requested(Environment env) {
        String v = env.getProperty(BACKEND);
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** The settings of one backend; empty when its plugin id cannot be a property name. */
    static Map<String, String> of(Environment env, String pluginId) {
        if (!(env instanceof ConfigurableEnvironment configurable)
                || !ConfigurationPropertyName.isValid("strata." + pluginId)) {
            return Map.of();
        }
        ConfigurationPropertyName prefix = ConfigurationPropertyName.of("strata." + pluginId);
        Map<String, String> out = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(configurable)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            boolean environment = isEnvironment(source);
            iterable.stream().filter(prefix::isAncestorOf).forEach(name -> {
                var property = source.getConfigurationProperty(name);
                if (property == null || property.getValue() == null) {
                    return;
                }
                String key = key(name, prefix.getNumberOfElements(), environment ? "-" : ".");
                out.putIfAbsent(key, env.resolvePlaceholders(property.getValue().toString()));
            });
        }
        return Collections.unmodifiableMap(out);
    }

    private static String key(ConfigurationPropertyName name, int from, String joiner) {
        StringBuilder key = new StringBuilder();
        for (int i = from; i < name.getNumberOfElements(); i++) {
            if (!key.isEmpty()) {
                key.append(joiner);
            }
            key.append(name.getElement(i, ConfigurationPropertyName.Form.DASHED));
        }
        return key.toString();
    }

    private static boolean isEnvironment(ConfigurationPropertySource source) {
        Object underlying = source.getUnderlyingSource();
        return underlying instanceof SystemEnvironmentPropertySource
                || (underlying instanceof org.springframework.core.env.PropertySource<?> ps
                && StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(ps.getName()));
    }
}
