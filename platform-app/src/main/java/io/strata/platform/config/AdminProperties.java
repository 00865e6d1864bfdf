package io.strata.platform.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The console's first account.
 *
 * @param username        login name of the account created at first start
 * @param initialPassword password for that account (env {@code STRATA_ADMIN_INITIAL_PASSWORD}); read
 *                        only while no admin account exists. When empty, a random one is generated
 *                        and printed once. There is deliberately no built-in default.
 */
@ConfigurationProperties("strata.admin")
public record AdminProperties(
        @DefaultValue("admin") String username,
        String initialPassword) {

    public boolean hasInitialPassword() {
        return initialPassword != null && !initialPassword.isBlank();
    }
}
