package io.strata.platform.api;

import io.strata.platform.engine.GenerationEvent;

/** An engine event tagged with the choice it belongs to. */
record ChoiceEvent(int index, GenerationEvent event) {
}
