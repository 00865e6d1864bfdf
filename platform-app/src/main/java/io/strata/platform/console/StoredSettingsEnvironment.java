package io.strata.platform.console;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * Makes the settings saved from the console's Settings page part of the environment at start, so the
 * engine and the request log bind them like any property. They rank below command-line arguments,
 * system properties and environment variables (an explicit flag still wins, and the Settings page shows
 * the difference) and above application.yml.
 *
 * <p>Runs before the application's connection pool exists, so it opens one short plain JDBC connection.
 * On the very first start the database or the table does not exist yet and nothing is added.
 */
public class StoredSettingsEnvironment implements EnvironmentPostProcessor, Ordered {
    static final String SOURCE = "strataConsoleSettings";

    @Override
    public int getOrder() {
        // after application.yml is loaded (the datasource URL comes from there)
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        String url = env.getProperty("spring.datasource.url");
        if (url == null || url.isBlank()) {
            return;
        }
        Map<String, Object> stored = read(url.startsWith("jdbc:h2:") ? url + ";IFEXISTS=TRUE" : url,
                env.getProperty("spring.datasource.username", ""), env.getProperty("spring.datasource.password", ""));
        if (stored.isEmpty()) {
            return;
        }
        MapPropertySource source = new MapPropertySource(SOURCE, stored);
        if (env.getPropertySources().contains(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)) {
            env.getPropertySources().addAfter(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, source);
        } else {
            env.getPropertySources().addLast(source);
        }
    }

    static Map<String, Object> read(String url, String user, String password) {
        Map<String, Object> out = new HashMap<>();
        try (Connection c = DriverManager.getConnection(url, user, password);
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT setting_key, setting_value FROM setting")) {
            while (rs.next()) {
                String key = rs.getString(1);
                String value = rs.getString(2);
                if (value != null && ConsoleSetting.byProperty(key).isPresent()) {
                    out.put(key, value);
                }
            }
        } catch (SQLException e) {
            // no database yet, or no setting table yet (first start, before Flyway): nothing stored
            return Map.of();
        }
        return out;
    }
}
