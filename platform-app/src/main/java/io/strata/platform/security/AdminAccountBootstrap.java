package io.strata.platform.security;

import io.strata.platform.config.AdminProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.stereotype.Component;

import java.security.SecureRandom;

/**
 * Creates the first console account when the database has none. Its password is the configured
 * {@code strata.admin.initial-password}; without one a random password is generated and printed
 * once, because a built-in default password is exactly what an attacker tries first.
 */
@Component
public class AdminAccountBootstrap implements InitializingBean {
    private static final Logger log = LoggerFactory.getLogger(AdminAccountBootstrap.class);
    private static final String ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    private static final int GENERATED_LENGTH = 20;

    private final AdminUserRepository users;
    private final PasswordEncoder encoder;
    private final AdminProperties properties;
    private final SecureRandom random = new SecureRandom();

    public AdminAccountBootstrap(AdminUserRepository users, PasswordEncoder encoder, AdminProperties properties) {
        this.users = users;
        this.encoder = encoder;
        this.properties = properties;
    }

    @Override
    public void afterPropertiesSet() {
        if (users.count() > 0) {
            return;
        }
        String username = properties.username();
        if (properties.hasInitialPassword()) {
            users.create(username, encoder.encode(properties.initialPassword()));
            log.info("Created console account '{}' with the password from strata.admin.initial-password", username);
            return;
        }
        String password = generate();
        users.create(username, encoder.encode(password));
        // Printed once, on purpose: only its hash is kept, so this is the operator's only chance to see it.
        log.warn("""

                ================================================================
                 Strata console account created
                   user:     {}
                   password: {}
                 This password is shown only now. Set STRATA_ADMIN_INITIAL_PASSWORD
                 before the first start to choose it yourself.
                ================================================================""", username, password);
    }

    private String generate() {
        StringBuilder password = new StringBuilder(GENERATED_LENGTH);
        for (int i = 0; i < GENERATED_LENGTH; i++) {
            password.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        return password.toString();
    }
}
