package io.strata.platform.admin;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginView;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;

import java.util.List;

/**
 * The console's landing page. Cards other than the backend summary are placeholders that later
 * parts of the platform (KV cache, prefix cache, load, latency) fill through their own fragments in
 * {@code templates/admin/cards/}.
 */
@Controller
public class DashboardController {
    private final PluginHost plugins;
    private final InferenceEngine engine;
    private final ServingBackend serving;

    public DashboardController(PluginHost plugins, InferenceEngine engine, ServingBackend serving) {
        this.plugins = plugins;
        this.engine = engine;
        this.serving = serving;
    }

    @GetMapping({"/admin", "/admin/"})
    public String dashboard(Model model) {
        List<PluginView> all = plugins.plugins();
        model.addAttribute("failedCount", all.stream().filter(PluginView::failed).count());
        model.addAttribute("availableBackends", plugins.availableBackends().stream()
                .map(b -> b.pluginId() + " (" + b.probe().devices().size() + " device(s))").toList());
        InferenceEngine.EngineStatus status = engine.status();
        model.addAttribute("backendSummary", BackendSummary.of(all, serving.pluginId(), serving.skipped(), status));
        model.addAttribute("servingView", ServingView.of(serving, status));
        return "admin/dashboard";
    }
}
