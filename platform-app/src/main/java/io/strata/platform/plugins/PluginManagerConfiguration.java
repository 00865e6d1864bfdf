package io.strata.platform.plugins;

import io.strata.platform.config.PluginProperties;
import org.pf4j.PluginManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

@Configuration(proxyBeanMethods = false)
class PluginManagerConfiguration {

    /**
     * The one PF4J manager. {@code unloadPlugins} (which stops, then closes class loaders) instead of
     * {@code stopPlugins}: the latter throws ConcurrentModificationException in PF4J 3.15 (pf4j#656).
     */
    @Bean(destroyMethod = "unloadPlugins")
    PluginManager pluginManager(PluginProperties properties, DatabasePluginStatusProvider statusProvider) {
        Path dir = properties.dir().toAbsolutePath().normalize();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create plugins folder " + dir + " (strata.plugins.dir)", e);
        }
        return new StrataPluginManager(dir, statusProvider);
    }
}
