package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.Map;

/** vLLM's {@code GET /health} (200, or 503 when the engine cannot serve) and {@code GET /version}. */
@RestController
public class HealthController {
    private final InferenceEngine engine;
    private final String version;

    public HealthController(InferenceEngine engine) {
        this.engine = engine;
        String v = HealthController.class.getPackage().getImplementationVersion();
        this.version = v == null ? "0.1.0-SNAPSHOT" : v;
    }

    @GetMapping("/health")
    ResponseEntity<Object> health() {
        InferenceEngine.EngineStatus s = engine.status();
        if (s.up()) {
            return ResponseEntity.ok().build();
        }
        return ResponseEntity.status(503).body(ErrorResponse.of(503, "ServiceUnavailableError", null, s.detail()));
    }

    @GetMapping("/version")
    Map<String, String> version() {
        return Map.of("version", version);
    }
}
