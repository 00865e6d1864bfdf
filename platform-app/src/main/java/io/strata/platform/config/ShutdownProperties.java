package io.strata.platform.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.time.Duration;

/**
 * Graceful shutdown. On SIGTERM the server stops accepting new requests and gives the ones in
 * flight (streams included) up to {@code drainTimeout} to finish before it closes. The value also
 * drives {@code spring.lifecycle.timeout-per-shutdown-phase} (see application.yml), so the engine's
 * own drain and the web server's share one budget.
 */
@ConfigurationProperties("strata.shutdown")
public record ShutdownProperties(@DefaultValue("30s") Duration drainTimeout) {
}
