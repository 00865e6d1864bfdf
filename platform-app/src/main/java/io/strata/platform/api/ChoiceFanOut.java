package io.strata.platform.api;

import io.strata.platform.engine.GenerationRequest;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.sampling.SamplingParams;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;

/**
 * Submits the {@code n} choices of one API request. All are queued before any byte is written, so a
 * full queue is a clean 503; if a later choice is refused, the ones already queued are aborted.
 */
final class ChoiceFanOut {
    private ChoiceFanOut() {
    }

    static Flux<ChoiceEvent> submit(InferenceEngine engine, String requestId, int[] prompt, SamplingParams params,
                                    int n, int priority, String cacheSalt) {
        List<InferenceEngine.Submission> queued = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                // n > 1 with a seed: each choice gets its own reproducible stream (seed + index)
                SamplingParams p = params.seed() == null || i == 0 ? params : params.withSeed(params.seed() + i);
                queued.add(engine.submit(new GenerationRequest(n == 1 ? requestId : requestId + "-" + i, prompt, p,
                        priority, cacheSalt)));
            }
        } catch (RuntimeException e) {
            queued.forEach(InferenceEngine.Submission::abort);
            throw e;
        }
        List<Flux<ChoiceEvent>> streams = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int index = i;
            InferenceEngine.Submission s = queued.get(i);
            streams.add(s.events().map(e -> new ChoiceEvent(index, e)).doOnCancel(s::abort));
        }
        return Flux.merge(streams);
    }
}
