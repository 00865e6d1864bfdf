package io.strata.platform.api;

import io.strata.platform.engine.sampling.SamplingParams;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Reads the sampling fields shared by completions and chat (vLLM's names and defaults). */
final class SamplingRequestParser {
    private SamplingRequestParser() {
    }

    /**
     * @param maxTokens resolved by the caller from max_tokens / max_completion_tokens (or null = fill the context)
     * @param logprobs  top-n per generated token, or null
     */
    static SamplingParams parse(RequestFields f, Integer maxTokens, Integer logprobs, int maxLogprobs, int vocab) {
        double temperature = f.number("temperature", 1.0);
        double topP = f.number("top_p", 1.0);
        Integer topK = f.integer("top_k", 0);
        double minP = f.number("min_p", 0.0);
        Long seed = f.longInteger("seed");
        double presence = f.number("presence_penalty", 0.0);
        double frequency = f.number("frequency_penalty", 0.0);
        double repetition = f.number("repetition_penalty", 1.0);
        Integer minTokens = f.integer("min_tokens", 0);
        List<String> stop = f.stringOrList("stop");
        Set<Integer> stopIds = new HashSet<>(f.intList("stop_token_ids"));
        boolean ignoreEos = f.bool("ignore_eos", false);
        Integer promptLogprobs = f.integer("prompt_logprobs", null);
        boolean includeStop = f.bool("include_stop_str_in_output", false);
        boolean skipSpecial = f.bool("skip_special_tokens", true);
        SamplingParams p = new SamplingParams(temperature, topP, topK == null ? 0 : topK, minP, seed, presence,
                frequency, repetition, maxTokens == null ? Integer.MAX_VALUE : maxTokens, minTokens, stop, stopIds,
                ignoreEos, logprobs, promptLogprobs, includeStop, skipSpecial);
        p.validate(maxLogprobs, vocab);
        return p;
    }
}
