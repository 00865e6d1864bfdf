package io.strata.platform.console;

import io.strata.platform.engine.EngineProperties;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.TunableEngine;
import io.strata.platform.requestlog.RequestLogWriter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Saves the Settings page to the {@code setting} table and tells what each component runs with now.
 *
 * <p>Each save publishes {@link Changed}; {@link LiveSettings} applies the values at once to the running
 * engine (queue limits on the next submission, scheduler limits before the next step) and the request log
 * (prompt logging). Saved values also become the properties of the next start
 * ({@link StoredSettingsEnvironment}); the page shows "restart to apply" only while the running value still
 * differs (no serving engine, or a command-line/environment value overrides the stored one).
 */
@Service
public class ConsoleSettings {
    private final JdbcClient jdbc;
    private final Environment env;
    private final ObjectProvider<EngineProperties> engineProps;
    private final ObjectProvider<InferenceEngine> engine;
    private final ObjectProvider<RequestLogWriter> requestLog;
    private final ApplicationEventPublisher events;

    public ConsoleSettings(JdbcClient jdbc, Environment env, ObjectProvider<EngineProperties> engineProps,
                           ObjectProvider<InferenceEngine> engine, ObjectProvider<RequestLogWriter> requestLog,
                           ApplicationEventPublisher events) {
        this.jdbc = jdbc;
        this.env = env;
        this.engineProps = engineProps;
        this.engine = engine;
        this.requestLog = requestLog;
        this.events = events;
    }

    /** Published after settings were saved: property name to new value (canonical text). */
    public record Changed(Map<String, String> values) {
    }

    /**
     * One row of the Settings page.
     *
     * @param saved     value stored from the console, or null
     * @param running   value the running component uses, or null when that component is not running
     * @param overriddenBy the property source that beats the stored value (command line, environment), or null
     */
    public record View(ConsoleSetting setting, String saved, String running, String overriddenBy) {
        public String value() {
            return saved != null ? saved : running;
        }

        public boolean pendingRestart() {
            return saved != null && running != null && !saved.equals(running) && overriddenBy == null;
        }
    }

    public List<View> views() {
        Map<String, String> stored = stored();
        List<View> out = new ArrayList<>();
        for (ConsoleSetting s : ConsoleSetting.values()) {
            out.add(new View(s, stored.get(s.property()), running(s), overriddenBy(s, stored.get(s.property()))));
        }
        return out;
    }

    public Map<String, String> stored() {
        Map<String, String> out = new HashMap<>();
        jdbc.sql("SELECT setting_key, setting_value FROM setting").query(rs -> {
            String key = rs.getString(1);
            if (ConsoleSetting.byProperty(key).isPresent()) {
                out.put(key, rs.getString(2));
            }
        });
        return out;
    }

    /**
     * Validates every submitted value first (nothing is saved when one is invalid), then saves those that
     * changed. Returns the changed ones.
     *
     * @param submitted form field ({@link ConsoleSetting#field()}) to raw value; an absent boolean means false
     */
    @Transactional
    public Map<String, String> save(Map<String, String> submitted) {
        Map<String, String> normalized = new LinkedHashMap<>();
        for (ConsoleSetting s : ConsoleSetting.values()) {
            String raw = submitted.get(s.field());
            if (raw == null && !s.isBoolean()) {
                continue;
            }
            normalized.put(s.property(), s.normalize(raw));
        }
        Map<String, String> before = stored();
        Map<String, String> changed = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : normalized.entrySet()) {
            String saved = before.get(e.getKey());
            if (saved != null ? saved.equals(e.getValue())
                    : e.getValue().equals(running(ConsoleSetting.byProperty(e.getKey()).orElseThrow()))) {
                continue; // unchanged; an untouched default keeps following application.yml
            }
            jdbc.sql("MERGE INTO setting (setting_key, setting_value, updated_at) KEY (setting_key) "
                            + "VALUES (:k, :v, CURRENT_TIMESTAMP)")
                    .param("k", e.getKey()).param("v", e.getValue()).update();
            changed.put(e.getKey(), e.getValue());
        }
        if (!changed.isEmpty()) {
            events.publishEvent(new Changed(Map.copyOf(changed)));
        }
        return changed;
    }

    /** Forgets a stored value: the next start uses application.yml again. */
    public boolean reset(ConsoleSetting s) {
        return jdbc.sql("DELETE FROM setting WHERE setting_key = :k").param("k", s.property()).update() > 0;
    }

    String running(ConsoleSetting s) {
        if (s == ConsoleSetting.LOG_PROMPTS) {
            RequestLogWriter w = requestLog.getIfAvailable();
            return w == null ? null : Boolean.toString(w.logPrompts());
        }
        EngineProperties p = engine.getIfAvailable() instanceof TunableEngine serving ? serving.limits()
                : engineProps.getIfAvailable();
        if (p == null) {
            return env.getProperty(s.property());
        }
        return switch (s) {
            case MAX_NUM_SEQS -> p.maxNumSeqs().toString();
            case MAX_NUM_BATCHED_TOKENS -> p.maxNumBatchedTokens().toString();
            case MAX_QUEUED_REQUESTS -> p.maxQueuedRequests().toString();
            case MAX_QUEUED_TOKENS -> p.maxQueuedTokens().toString();
            case LOG_PROMPTS -> throw new IllegalStateException();
        };
    }

    /** Which higher-ranked property source sets this property at this moment, if any. */
    String overriddenBy(ConsoleSetting s, String saved) {
        if (saved == null || !(env instanceof org.springframework.core.env.ConfigurableEnvironment ce)) {
            return null;
        }
        for (var source : ce.getPropertySources()) {
            if (source.getName().equals(StoredSettingsEnvironment.SOURCE)) {
                return null;
            }
            if (source.containsProperty(s.property()) && !source.getName().startsWith("configurationProperties")) {
                return source.getName();
            }
            if (source.getName().equals(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)) {
                return null;
            }
        }
        return null;
    }
}
