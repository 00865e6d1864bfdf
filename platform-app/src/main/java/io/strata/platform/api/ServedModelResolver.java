package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import org.springframework.stereotype.Component;

/** Maps the request's {@code model} to the served model; unknown names are 404 as in vLLM. */
@Component
class ServedModelResolver {
    private final InferenceEngine engine;
    private final ApiProperties props;

    ServedModelResolver(InferenceEngine engine, ApiProperties props) {
        this.engine = engine;
        this.props = props;
    }

    String servedName() {
        String configured = props.servedModelName();
        return configured == null || configured.isBlank() ? engine.model().id() : configured;
    }

    ModelCard resolve(String requested) {
        ModelCard card = engine.model();
        if (requested != null && !requested.equals(servedName()) && !requested.equals(card.id())) {
            throw ApiException.notFound("model", "The model `" + requested + "` does not exist.");
        }
        return card;
    }
}
