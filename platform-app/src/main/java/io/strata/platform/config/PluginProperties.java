package io.strata.platform.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Where backend plugins live and how far the platform trusts them.
 *
 * @param dir           folder scanned for plugin jars at start; uploads are written here too
 * @param maxUploadSize largest jar accepted by the console's upload form
 * @param probeTimeout  how long a backend's {@code probe()} may take before it is reported FAILED;
 *                      a hung driver call must not hold up the start of the whole platform
 */
@ConfigurationProperties("strata.plugins")
public record PluginProperties(
        @DefaultValue("./plugins") Path dir,
        @DefaultValue("64MB") DataSize maxUploadSize,
        @DefaultValue("20s") Duration probeTimeout) {
}
