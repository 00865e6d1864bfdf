package io.strata.platform.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The embedded H2 database. {@code path} is the file prefix H2 writes ({@code <path>.mv.db}); the
 * JDBC URL in application.yml is built from it. Point {@code spring.datasource.url} elsewhere to use
 * another database; Flyway then migrates that one.
 */
@ConfigurationProperties("strata.db")
public record DatabaseProperties(@DefaultValue("./data/strata") String path) {
}
