package io.strata.platform.engine.sampling;

import java.util.List;
import java.util.Set;

/**
 * How one completion choice picks its tokens and when it stops. Field meanings follow vLLM's
 * {@code SamplingParams} so clients written against vLLM behave the same here.
 *
 * @param temperature        0 means greedy (argmax); otherwise logits are divided by it
 * @param topP               nucleus mass in (0, 1]; 1 disables
 * @param topK               keep the k most likely tokens; 0 or -1 disables
 * @param minP               drop tokens whose probability is below {@code minP × p_max}; 0 disables
 * @param seed               per-request seed; null draws one from the engine's generator
 * @param presencePenalty    subtracted once from every token already generated
 * @param frequencyPenalty   subtracted per occurrence of a token already generated
 * @param repetitionPenalty  divides positive / multiplies negative logits of tokens seen in prompt or output; 1 disables
 * @param maxTokens          most tokens to generate (never null once the API resolved the context limit)
 * @param minTokens          EOS and stop tokens are suppressed until this many tokens were generated
 * @param stop               stop strings; the matched one is not part of the output unless {@code includeStopStrInOutput}
 * @param stopTokenIds       extra token ids that end the choice
 * @param ignoreEos          keep generating after EOS
 * @param logprobs           top logprobs to return per generated token; null for none, 0 for only the chosen token's
 * @param promptLogprobs     top logprobs per prompt position; null for none
 * @param includeStopStrInOutput keep the stop string in the text
 * @param skipSpecialTokens  drop special tokens from the text
 */
public record SamplingParams(
        double temperature,
        double topP,
        int topK,
        double minP,
        Long seed,
        double presencePenalty,
        double frequencyPenalty,
        double repetitionPenalty,
        int maxTokens,
        int minTokens,
        List<String> stop,
        Set<Integer> stopTokenIds,
        boolean ignoreEos,
        Integer logprobs,
        Integer promptLogprobs,
        boolean includeStopStrInOutput,
        boolean skipSpecialTokens) {

    /** Below this temperature sampling is greedy; dividing by tiny temperatures only overflows. */
    public static final double GREEDY_EPSILON = 1e-5;

    public SamplingParams {
        stop = stop == null ? List.of() : List.copyOf(stop);
        stopTokenIds = stopTokenIds == null ? Set.of() : Set.copyOf(stopTokenIds);
    }

    public static SamplingParams greedy(int maxTokens) {
        return new SamplingParams(0, 1, 0, 0, null, 0, 0, 1, maxTokens, 0, List.of(), Set.of(),
                false, null, null, false, true);
    }

    public boolean isGreedy() {
        return temperature < GREEDY_EPSILON;
    }

    public boolean hasPenalties() {
        return presencePenalty != 0 || frequencyPenalty != 0 || repetitionPenalty != 1;
    }

    public SamplingParams withSeed(Long newSeed) {
        return new SamplingParams(temperature, topP, topK, minP, newSeed, presencePenalty, frequencyPenalty,
                repetitionPenalty, maxTokens, minTokens, stop, stopTokenIds, ignoreEos, logprobs, promptLogprobs,
                includeStopStrInOutput, skipSpecialTokens);
    }

    public SamplingParams withMaxTokens(int newMax) {
        return new SamplingParams(temperature, topP, topK, minP, seed, presencePenalty, frequencyPenalty,
                repetitionPenalty, newMax, minTokens, stop, stopTokenIds, ignoreEos, logprobs, promptLogprobs,
                includeStopStrInOutput, skipSpecialTokens);
    }

    /**
     * Checks every value against the range vLLM accepts.
     *
     * @param maxLogprobs server cap on {@code logprobs} / {@code prompt_logprobs}
     * @param vocabSize   model vocabulary, bounds {@code top_k} is not checked against it (larger means all)
     * @throws SamplingParameterException naming the first offending field
     */
    public void validate(int maxLogprobs, int vocabSize) {
        if (!(temperature >= 0) || temperature > 100) {
            throw new SamplingParameterException("temperature", "temperature must be in [0, 100], got " + temperature);
        }
        if (!(topP > 0) || topP > 1) {
            throw new SamplingParameterException("top_p", "top_p must be in (0, 1], got " + topP);
        }
        if (topK < -1) {
            throw new SamplingParameterException("top_k", "top_k must be -1 (disable), 0 (disable) or at least 1, got " + topK);
        }
        if (!(minP >= 0) || minP > 1) {
            throw new SamplingParameterException("min_p", "min_p must be in [0, 1], got " + minP);
        }
        if (!(presencePenalty >= -2) || presencePenalty > 2) {
            throw new SamplingParameterException("presence_penalty", "presence_penalty must be in [-2, 2], got " + presencePenalty);
        }
        if (!(frequencyPenalty >= -2) || frequencyPenalty > 2) {
            throw new SamplingParameterException("frequency_penalty", "frequency_penalty must be in [-2, 2], got " + frequencyPenalty);
        }
        if (!(repetitionPenalty > 0) || repetitionPenalty > 2) {
            throw new SamplingParameterException("repetition_penalty", "repetition_penalty must be in (0, 2], got " + repetitionPenalty);
        }
        if (maxTokens < 1) {
            throw new SamplingParameterException("max_tokens", "max_tokens must be at least 1, got " + maxTokens);
        }
        if (minTokens < 0 || minTokens > maxTokens) {
            throw new SamplingParameterException("min_tokens", "min_tokens must be in [0, max_tokens=" + maxTokens + "], got " + minTokens);
        }
        if (logprobs != null && (logprobs < 0 || logprobs > maxLogprobs)) {
            throw new SamplingParameterException("logprobs", "logprobs must be in [0, " + maxLogprobs + "], got " + logprobs);
        }
        if (promptLogprobs != null && (promptLogprobs < 0 || promptLogprobs > maxLogprobs)) {
            throw new SamplingParameterException("prompt_logprobs", "prompt_logprobs must be in [0, " + maxLogprobs + "], got " + promptLogprobs);
        }
        for (String s : stop) {
            if (s == null || s.isEmpty()) {
                throw new SamplingParameterException("stop", "stop strings must not be empty");
            }
        }
        for (Integer id : stopTokenIds) {
            if (id == null || id < 0 || id >= vocabSize) {
                throw new SamplingParameterException("stop_token_ids", "stop_token_ids must be token ids in [0, " + vocabSize + "), got " + id);
            }
        }
    }
}
