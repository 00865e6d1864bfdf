package io.strata.platform.console;

import io.strata.platform.engine.EngineProperties;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.TunableEngine;
import io.strata.platform.requestlog.RequestLogWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import java.util.HashMap;
import java.util.Map;

/**
 * Applies saved settings to the running components without a restart: prompt logging to the request log,
 * queue and scheduler limits to the serving engine ({@link TunableEngine#applyLimits}; with data-parallel
 * ranks, to each rank). A value that a command-line or environment property overrides is not applied (it would
 * not survive a restart either).
 */
@Component
public class LiveSettings {
    private static final Logger log = LoggerFactory.getLogger(LiveSettings.class);

    private final ConsoleSettings settings;
    private final ObjectProvider<InferenceEngine> engine;
    private final ObjectProvider<RequestLogWriter> requestLog;

    public LiveSettings(ConsoleSettings settings, ObjectProvider<InferenceEngine> engine,
                        ObjectProvider<RequestLogWriter> requestLog) {
        this.settings = settings;
        this.engine = engine;
        this.requestLog = requestLog;
    }

    @EventListener
    public void onChanged(ConsoleSettings.Changed changed) {
        Map<ConsoleSetting, String> apply = new HashMap<>();
        changed.values().forEach((property, value) -> ConsoleSetting.byProperty(property).ifPresent(s -> {
            String by = settings.overriddenBy(s, value);
            if (by == null) {
                apply.put(s, value);
            } else {
                log.info("Setting {} saved but not applied: {} sets it", property, by);
            }
        }));
        RequestLogWriter writer = requestLog.getIfAvailable();
        if (writer != null && apply.containsKey(ConsoleSetting.LOG_PROMPTS)) {
            writer.logPrompts(Boolean.parseBoolean(apply.get(ConsoleSetting.LOG_PROMPTS)));
        }
        if (engine.getIfAvailable() instanceof TunableEngine serving) {
            EngineProperties now = serving.limits();
            EngineProperties next = new EngineProperties(
                    intOr(apply, ConsoleSetting.MAX_NUM_BATCHED_TOKENS, now.maxNumBatchedTokens()),
                    intOr(apply, ConsoleSetting.MAX_NUM_SEQS, now.maxNumSeqs()),
                    intOr(apply, ConsoleSetting.MAX_QUEUED_REQUESTS, now.maxQueuedRequests()),
                    apply.containsKey(ConsoleSetting.MAX_QUEUED_TOKENS)
                            ? Long.parseLong(apply.get(ConsoleSetting.MAX_QUEUED_TOKENS)) : now.maxQueuedTokens(),
                    now.policy(), now.longPrefillTokenThreshold());
            if (!next.equals(now)) {
                serving.applyLimits(next);
                log.info("Engine limits applied: {}", next);
            }
        }
    }

    private static int intOr(Map<ConsoleSetting, String> apply, ConsoleSetting s, int current) {
        String v = apply.get(s);
        return v == null ? current : Math.toIntExact(Long.parseLong(v));
    }
}
