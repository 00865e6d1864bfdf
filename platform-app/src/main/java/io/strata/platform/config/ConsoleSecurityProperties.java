package io.strata.platform.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What the console's security chain leaves open.
 *
 * @param publicMetrics whether {@code /actuator/prometheus} and {@code /actuator/info} are readable
 *                      without login (Prometheus cannot fill in a login form). Health probes are
 *                      always public.
 */
@ConfigurationProperties("strata.security")
public record ConsoleSecurityProperties(@DefaultValue("true") boolean publicMetrics) {
}
