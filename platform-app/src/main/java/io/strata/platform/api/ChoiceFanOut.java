package io.strata.platform.api;

import io.strata.platform.engine.GenerationRequest;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.sampling.SamplingParams;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;

/**
 * Submits the choices of one API request: {@code n} per prompt, choice {@code p·n + j} being choice j of
 * prompt p (as vLLM numbers a batch). All are queued before any byte is written, so a full queue is a
 * clean 503; if a later choice is refused, the ones already queued are aborted.
 */
final class ChoiceFanOut {
    private ChoiceFanOut() {
    }

    static Flux<ChoiceEvent> submit(InferenceEngine engine, String requestId, int[] prompt, SamplingParams params,
                                    int n, int priority, String cacheSalt) {
        return submit(engine, requestId, List.of(prompt), List.of(params), n, priority, cacheSalt);
    }

    /** {@code params.get(p)} are prompt p's sampling parameters (its own max_tokens). */
    static Flux<ChoiceEvent> submit(InferenceEngine engine, String requestId, List<int[]> prompts,
                                    List<SamplingParams> params, int n, int priority, String cacheSalt) {
        int total = prompts.size() * n;
        List<InferenceEngine.Submission> queued = new ArrayList<>(total);
        try {
            for (int i = 0; i < total; i++) {
                SamplingParams base = params.get(i / n);
                int j = i % n;
                // n > 1 with a seed: each choice of a prompt gets its own reproducible stream (seed + j)
                SamplingParams p = base.seed() == null || j == 0 ? base : base.toBuilder().seed(base.seed() + j).build();
                queued.add(engine.submit(new GenerationRequest(total == 1 ? requestId : requestId + "-" + i,
                        prompts.get(i / n), p, priority, cacheSalt)));
            }
        } catch (RuntimeException e) {
            queued.forEach(InferenceEngine.Submission::abort);
            throw e;
        }
        List<Flux<ChoiceEvent>> streams = new ArrayList<>(total);
        for (int i = 0; i < total; i++) {
            int index = i;
            InferenceEngine.Submission s = queued.get(i);
            streams.add(s.events().map(e -> new ChoiceEvent(index, e)).doOnCancel(s::abort));
        }
        return Flux.merge(streams);
    }
}
