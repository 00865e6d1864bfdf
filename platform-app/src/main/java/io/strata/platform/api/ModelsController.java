package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.util.List;

/** {@code GET /v1/models} in vLLM's shape, with {@code max_model_len}. */
@RestController
public class ModelsController {
    private final InferenceEngine engine;
    private final ServedModelResolver models;

    public ModelsController(InferenceEngine engine, ServedModelResolver models) {
        this.engine = engine;
        this.models = models;
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Model(String id, String object, long created, String ownedBy, String root, String parent,
                        int maxModelLen, List<Object> permission) {
    }

    public record ModelList(String object, List<Model> data) {
    }

    @GetMapping("/v1/models")
    ModelList list() {
        return new ModelList("list", List.of(card()));
    }

    @GetMapping("/v1/models/{id}")
    Model one(@PathVariable String id) {
        models.resolve(id);
        return card();
    }

    private Model card() {
        ModelCard c = engine.model();
        // root names the checkpoint (its folder), never where it lies on the server's disk
        return new Model(models.servedName(), "model", c.created(), "strata", c.id(), null, c.maxModelLen(), List.of());
    }
}
