package io.strata.platform.api;

import io.strata.platform.engine.FinishReason;
import io.strata.platform.engine.GenerationEvent;

/** What one choice accumulated (non-streaming responses, usage). */
final class ChoiceState {
    final StringBuilder text = new StringBuilder();
    GenerationEvent.Started started;
    GenerationEvent.Finished finished;
    int textOffset;

    FinishReason reason() {
        return finished == null ? FinishReason.ABORT : finished.reason();
    }
}
