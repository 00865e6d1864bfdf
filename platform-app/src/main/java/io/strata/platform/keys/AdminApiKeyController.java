package io.strata.platform.keys;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Admin REST API for keys, under the console's security chain ({@code /admin/**}, admins only, CSRF on):
 * create (the secret is in this one response only), list, revoke.
 */
@RestController
@RequestMapping("/admin/api/keys")
public class AdminApiKeyController {
    private final ApiKeyService keys;

    public AdminApiKeyController(ApiKeyService keys) {
        this.keys = keys;
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record CreateKeyRequest(String name, Integer rateLimitPerMinute) {
    }

    /** A key as listed: no secret, no hash. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record KeyView(long id, String name, String prefix, Integer rateLimitPerMinute, Instant createdAt,
                          Instant revokedAt, Instant lastUsedAt, boolean revoked) {
        static KeyView of(ApiKey k) {
            return new KeyView(k.id(), k.name(), k.prefix(), k.rateLimitPerMinute(), k.createdAt(), k.revokedAt(),
                    k.lastUsedAt(), k.revoked());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record CreatedKeyView(KeyView key, String secret, String notice) {
    }

    @PostMapping
    Mono<ResponseEntity<CreatedKeyView>> create(@RequestBody CreateKeyRequest request) {
        return Mono.fromCallable(() -> keys.create(request.name(), request.rateLimitPerMinute()))
                .subscribeOn(Schedulers.boundedElastic())
                .map(c -> ResponseEntity.status(HttpStatus.CREATED).body(new CreatedKeyView(KeyView.of(c.key()),
                        c.secret(), "Store this key now: it is shown only once.")));
    }

    @GetMapping
    Mono<List<KeyView>> list() {
        return Mono.fromCallable(() -> keys.list().stream().map(KeyView::of).toList())
                .subscribeOn(Schedulers.boundedElastic());
    }

    @DeleteMapping("/{id}")
    Mono<ResponseEntity<Map<String, Object>>> revoke(@PathVariable long id) {
        return Mono.fromCallable(() -> keys.revoke(id))
                .subscribeOn(Schedulers.boundedElastic())
                .map(done -> done
                        ? ResponseEntity.ok(Map.<String, Object>of("id", id, "revoked", true))
                        : ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.<String, Object>of("error", "No active key with id " + id)));
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Map<String, String>> invalid(IllegalArgumentException e) {
        return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
    }
}
