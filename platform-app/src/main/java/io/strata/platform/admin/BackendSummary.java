package io.strata.platform.admin;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.plugins.BackendReport;
import io.strata.platform.plugins.PluginView;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The dashboard's Backends card: which backend serves the model, and for every other plugin why it
 * does not (available but not chosen, skipped because it could not load the model, unavailable on this host
 * with the probe's reason, disabled, FAILED).
 *
 * @param headline one sentence: who serves, or why nothing does
 * @param lines    one per plugin
 */
public record BackendSummary(String headline, List<Line> lines) {

    /**
     * @param status {@code serving}, {@code available}, {@code skipped}, {@code unavailable}, {@code disabled} or {@code failed}
     * @param detail what a person needs to know about it
     */
    public record Line(String pluginId, String status, String detail) {
    }

    public static BackendSummary of(List<PluginView> plugins, Optional<String> serving, List<ServingBackend.Skipped> skipped,
                                    InferenceEngine.EngineStatus engine) {
        String servingId = engine.up() ? serving.orElse(null) : null;
        Map<String, String> skips = skipped.stream()
                .collect(Collectors.toMap(ServingBackend.Skipped::pluginId, ServingBackend.Skipped::reason, (a, b) -> a));
        List<Line> lines = plugins.stream().map(p -> skips.containsKey(p.pluginId()) && !p.pluginId().equals(servingId)
                ? new Line(p.pluginId(), "skipped", skips.get(p.pluginId())
                        + (servingId == null ? "" : "; the " + servingId + " backend serves instead"))
                : line(p, servingId)).toList();
        String headline = servingId != null
                ? "The model is served by the " + servingId + " backend."
                : "No backend serves the model: " + engine.detail();
        return new BackendSummary(headline, lines);
    }

    private static Line line(PluginView p, String servingId) {
        if (p.failed()) {
            return new Line(p.pluginId(), "failed", "FAILED: " + p.reason());
        }
        if (p.disabled()) {
            return new Line(p.pluginId(), "disabled", "disabled on the Plugins page");
        }
        if (!"STARTED".equals(p.state())) {
            return new Line(p.pluginId(), "unavailable", p.state());
        }
        if (p.pluginId().equals(servingId)) {
            return new Line(p.pluginId(), "serving", "serves the model" + devices(p));
        }
        List<BackendReport> available = p.backends().stream().filter(BackendReport::available).toList();
        if (!available.isEmpty()) {
            return new Line(p.pluginId(), "available", "available" + devices(p)
                    + (servingId == null ? "" : "; not used, the engine runs on one backend (" + servingId + ")"));
        }
        String reasons = p.backends().stream()
                .map(b -> b.probe() != null ? b.probe().reason() : b.error())
                .filter(r -> r != null && !r.isBlank())
                .collect(Collectors.joining("; "));
        return new Line(p.pluginId(), "unavailable", "cannot serve on this host: "
                + (reasons.isEmpty() ? "it offers no BackendProvider" : reasons));
    }

    private static String devices(PluginView p) {
        List<String> names = p.backends().stream().filter(BackendReport::available)
                .flatMap(b -> b.probe().devices().stream()).map(d -> d.name()).toList();
        return names.isEmpty() ? "" : " on " + String.join(", ", names);
    }
}
