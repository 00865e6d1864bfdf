package io.strata.platform.admin;

import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginView;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** The Plugins page as JSON, for scripts. State changes need the CSRF header like any console form. */
@RestController
@RequestMapping("/admin/api/plugins")
public class PluginsApiController {
    private final PluginHost host;

    public PluginsApiController(PluginHost host) {
        this.host = host;
    }

    @GetMapping
    public List<PluginView> list() {
        return host.plugins();
    }

    @PostMapping("/{id}/disable")
    public Mono<ResponseEntity<?>> disable(@PathVariable String id) {
        return change(() -> host.disable(id));
    }

    @PostMapping("/{id}/enable")
    public Mono<ResponseEntity<?>> enable(@PathVariable String id) {
        return change(() -> host.enable(id));
    }

    private static Mono<ResponseEntity<?>> change(Supplier<PluginView> action) {
        return Mono.fromCallable(action::get)
                .subscribeOn(Schedulers.boundedElastic())
                .<ResponseEntity<?>>map(ResponseEntity::ok)
                .onErrorResume(IllegalArgumentException.class,
                        e -> Mono.just(ResponseEntity.status(404).body(Map.of("error", e.getMessage()))));
    }
}
