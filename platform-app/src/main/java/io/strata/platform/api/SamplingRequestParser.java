package io.strata.platform.api;

import io.strata.platform.engine.sampling.SamplingParams;

import java.util.HashSet;

/**
 * Reads the sampling fields shared by completions and chat (vLLM's names and defaults) into a builder; the
 * endpoint adds what it resolves itself (the output budget, logprobs) and builds once, validated.
 */
final class SamplingRequestParser {
    private SamplingRequestParser() {
    }

    static SamplingParams.Builder read(RequestFields f) {
        return SamplingParams.builder()
                .temperature(f.number("temperature", 1.0))
                .topP(f.number("top_p", 1.0))
                .topK(f.integer("top_k", 0))
                .minP(f.number("min_p", 0.0))
                .seed(f.longInteger("seed"))
                .presencePenalty(f.number("presence_penalty", 0.0))
                .frequencyPenalty(f.number("frequency_penalty", 0.0))
                .repetitionPenalty(f.number("repetition_penalty", 1.0))
                .minTokens(f.integer("min_tokens", 0))
                .stop(f.stringOrList("stop"))
                .stopTokenIds(new HashSet<>(f.intList("stop_token_ids")))
                .ignoreEos(f.bool("ignore_eos", false))
                .promptLogprobs(f.integer("prompt_logprobs", null))
                .includeStopStrInOutput(f.bool("include_stop_str_in_output", false))
                .skipSpecialTokens(f.bool("skip_special_tokens", true));
    }
}
