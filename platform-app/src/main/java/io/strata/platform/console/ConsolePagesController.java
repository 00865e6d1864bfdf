package io.strata.platform.console;

import io.strata.platform.keys.ApiKey;
import io.strata.platform.keys.ApiKeyService;
import io.strata.platform.planner.CapacityPlanner;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The console pages besides the dashboard and Plugins: Requests, Model, API keys and Settings. Blocking work (JDBC,
 * config parsing) runs on the bounded-elastic pool. Outcomes of form posts travel back as
 * {@code notice}/{@code error} query parameters, as on the Plugins page, so a reload never repeats them;
 * a new API key's secret travels from the POST to the page it redirects to in the console session, and is
 * taken out of it by that page, so it is shown once and a refresh neither repeats the POST nor shows it again.
 */
@Controller
public class ConsolePagesController {
    private final EngineView engine;
    private final FinishedRequests finished;
    private final ApiKeyService keys;
    private final ConsoleSettings settings;

    public ConsolePagesController(EngineView engine, FinishedRequests finished, ApiKeyService keys,
                                  ConsoleSettings settings) {
        this.engine = engine;
        this.finished = finished;
        this.keys = keys;
        this.settings = settings;
    }

    // ------------------------------------------------------------------ requests

    /** Finished requests per page: enough to scan, few enough that the page stays one screen or two. */
    static final int FINISHED_PAGE_SIZE = 25;

    @GetMapping("/admin/requests")
    public Mono<String> requests(Model model, @RequestParam(required = false) String key,
                                 @RequestParam(required = false) String reason,
                                 @RequestParam(required = false) Integer since,
                                 @RequestParam(defaultValue = "1") int page) {
        return blocking(() -> {
            model.addAttribute("keyNames", finished.keyNames());
            model.addAttribute("reasons", List.of("stop", "length", "abort", "error", "rejected"));
            model.addAttribute("filterKey", key == null ? "" : key);
            model.addAttribute("filterReason", reason == null ? "" : reason);
            model.addAttribute("filterSince", since);
            try {
                FinishedRequests.Page rows = finished.page(key, reason, since, page, FINISHED_PAGE_SIZE);
                model.addAttribute("finishedPage", rows);
                model.addAttribute("finished", rows.entries());
            } catch (IllegalArgumentException | ArithmeticException e) {
                model.addAttribute("finished", List.of());
                model.addAttribute("error", e.getMessage());
            }
            return "admin/requests";
        });
    }

    // ------------------------------------------------------------------ model

    @GetMapping("/admin/model")
    public Mono<String> model(Model model, @RequestParam(required = false) String plan,
                              @RequestParam(required = false) Long context,
                              @RequestParam(required = false) Double memoryGib,
                              @RequestParam(required = false) Long targetContext) {
        return blocking(() -> {
            ModelReport.Loaded loaded = ModelReport.loaded(engine.engine().model(), engine.kvCapacity());
            model.addAttribute("m", loaded);
            model.addAttribute("status", engine.engine().status());
            String planModel = plan == null ? (loaded.config() == null ? "flash" : "loaded") : plan;
            long ctx = context == null ? 131_072 : context;
            double mem = memoryGib == null ? 16 : memoryGib;
            long target = targetContext == null ? ctx : targetContext;
            model.addAttribute("planModel", planModel);
            model.addAttribute("planContext", ctx);
            model.addAttribute("planMemory", mem);
            model.addAttribute("planTarget", target);
            model.addAttribute("seeds", CapacityPlanner.seedsTable());
            try {
                model.addAttribute("plan", ModelReport.plan(planModel, loaded.config(), loaded.card().id(), ctx, mem, target));
            } catch (IllegalArgumentException e) {
                model.addAttribute("planError", e.getMessage());
            }
            return "admin/model";
        });
    }

    // ------------------------------------------------------------------ keys

    /** Session attribute holding a just-created key until the page after the redirect shows it. */
    static final String NEW_KEY = "strata.newApiKey";

    @GetMapping("/admin/keys")
    public Mono<String> keys(ServerWebExchange exchange, Model model, @RequestParam(required = false) String notice,
                             @RequestParam(required = false) String error) {
        return exchange.getSession().flatMap(session -> {
            ApiKeyService.CreatedKey created = session.getAttributes().containsKey(NEW_KEY)
                    ? (ApiKeyService.CreatedKey) session.getAttributes().remove(NEW_KEY) : null;
            return blocking(() -> keysPage(model, notice, error, created));
        });
    }

    @PostMapping("/admin/keys")
    public Mono<String> createKey(ServerWebExchange exchange) {
        return Mono.zip(exchange.getFormData(), exchange.getSession()).flatMap(t -> blocking(() -> {
            String name = t.getT1().getFirst("name");
            String limit = t.getT1().getFirst("rateLimitPerMinute");
            Integer perMinute;
            try {
                perMinute = limit == null || limit.isBlank() ? null : Integer.valueOf(limit.trim());
            } catch (NumberFormatException e) {
                return redirect("/admin/keys", "error", "Rate limit must be a whole number of requests per minute, got '" + limit + "'");
            }
            try {
                t.getT2().getAttributes().put(NEW_KEY, keys.create(name, perMinute));
                return "redirect:/admin/keys";
            } catch (IllegalArgumentException e) {
                return redirect("/admin/keys", "error", e.getMessage());
            }
        }));
    }

    @PostMapping("/admin/keys/{id}/revoke")
    public Mono<String> revokeKey(@PathVariable long id) {
        return blocking(() -> keys.revoke(id)
                ? redirect("/admin/keys", "notice", "Key " + id + " revoked; requests with it now get 401.")
                : redirect("/admin/keys", "error", "No active key with id " + id + "."));
    }

    private String keysPage(Model model, String notice, String error, ApiKeyService.CreatedKey created) {
        List<ApiKey> all = keys.list();
        model.addAttribute("keys", all);
        model.addAttribute("notice", notice);
        model.addAttribute("error", error);
        model.addAttribute("created", created);
        return "admin/keys";
    }

    // ------------------------------------------------------------------ settings

    @GetMapping("/admin/settings")
    public Mono<String> settings(Model model, @RequestParam(required = false) String notice,
                                 @RequestParam(required = false) String error) {
        return blocking(() -> {
            model.addAttribute("settings", settings.views());
            model.addAttribute("notice", notice);
            model.addAttribute("error", error);
            return "admin/settings";
        });
    }

    @PostMapping("/admin/settings")
    public Mono<String> saveSettings(ServerWebExchange exchange) {
        return exchange.getFormData().flatMap(form -> blocking(() -> {
            try {
                Map<String, String> changed = settings.save(single(form));
                return redirect("/admin/settings", "notice", changed.isEmpty() ? "Nothing changed."
                        : "Saved " + String.join(", ", changed.keySet().stream()
                        .map(k -> k + "=" + changed.get(k)).toList())
                        + ". Saved values apply when the platform next starts.");
            } catch (IllegalArgumentException e) {
                return redirect("/admin/settings", "error", e.getMessage());
            }
        }));
    }

    private static Map<String, String> single(MultiValueMap<String, String> form) {
        Map<String, String> out = new HashMap<>();
        form.forEach((k, v) -> out.put(k, v.isEmpty() ? "" : v.getLast()));
        return out;
    }

    private static String redirect(String path, String kind, String message) {
        return "redirect:" + UriComponentsBuilder.fromPath(path).queryParam(kind, message).encode().build().toUriString();
    }

    private static Mono<String> blocking(Callable<String> work) {
        return Mono.fromCallable(work).subscribeOn(Schedulers.boundedElastic());
    }
}
