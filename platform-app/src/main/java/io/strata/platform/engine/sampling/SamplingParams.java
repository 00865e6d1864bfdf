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
 * @param maxTokens          most tokens to generate (the API resolves an absent one to what the context leaves)
 * @param minTokens          EOS and stop tokens are suppressed until this many tokens were generated
 * @param stop               stop strings; the matched one is not part of the output unless {@code includeStopStrInOutput}
 * @param stopTokenIds       extra token ids that end the choice
 * @param ignoreEos          keep generating after EOS
 * @param logprobs           top logprobs to return per generated token; null for none, 0 for only the chosen token's
 * @param promptLogprobs     top logprobs per prompt position; null for none
 * @param includeStopStrInOutput keep the stop string in the text
 * @param skipSpecialTokens  drop special tokens from the text
 * @see Builder the one way requests build them
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

    /** Greedy decoding of up to {@code maxTokens} tokens, everything else at its default. */
    public static SamplingParams greedy(int maxTokens) {
        return builder().temperature(0).maxTokens(maxTokens).build();
    }

    /** A builder with vLLM's defaults (temperature 1, no truncation, no penalties, 16 tokens). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these values, to derive a variant (a per-choice seed, a per-prompt budget). */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.temperature = temperature;
        b.topP = topP;
        b.topK = topK;
        b.minP = minP;
        b.seed = seed;
        b.presencePenalty = presencePenalty;
        b.frequencyPenalty = frequencyPenalty;
        b.repetitionPenalty = repetitionPenalty;
        b.maxTokens = maxTokens;
        b.minTokens = minTokens;
        b.stop = stop;
        b.stopTokenIds = stopTokenIds;
        b.ignoreEos = ignoreEos;
        b.logprobs = logprobs;
        b.promptLogprobs = promptLogprobs;
        b.includeStopStrInOutput = includeStopStrInOutput;
        b.skipSpecialTokens = skipSpecialTokens;
        return b;
    }

    public boolean isGreedy() {
        return temperature < GREEDY_EPSILON;
    }

    public boolean hasPenalties() {
        return presencePenalty != 0 || frequencyPenalty != 0 || repetitionPenalty != 1;
    }

    /**
     * Checks every value against the range vLLM accepts.
     *
     * @param maxLogprobs server cap on {@code logprobs} / {@code prompt_logprobs}
     * @param vocabSize   model vocabulary, bounds {@code top_k} is not checked against it (larger means all)
     * @throws SamplingParameterException naming the first offending field
     */
    private void validate(int maxLogprobs, int vocabSize) {
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

    /**
     * Sampling parameters field by field. What a request sends goes through {@link #build(int, int)}, which
     * checks every value against the server's limits; {@link #build()} is for values the server chose itself.
     */
    public static final class Builder {
        private double temperature = 1.0;
        private double topP = 1.0;
        private int topK;
        private double minP;
        private Long seed;
        private double presencePenalty;
        private double frequencyPenalty;
        private double repetitionPenalty = 1.0;
        private int maxTokens = 16;
        private int minTokens;
        private List<String> stop = List.of();
        private Set<Integer> stopTokenIds = Set.of();
        private boolean ignoreEos;
        private Integer logprobs;
        private Integer promptLogprobs;
        private boolean includeStopStrInOutput;
        private boolean skipSpecialTokens = true;

        private Builder() {
        }

        public Builder temperature(double v) { temperature = v; return this; }

        public Builder topP(double v) { topP = v; return this; }

        public Builder topK(int v) { topK = v; return this; }

        public Builder minP(double v) { minP = v; return this; }

        public Builder seed(Long v) { seed = v; return this; }

        public Builder presencePenalty(double v) { presencePenalty = v; return this; }

        public Builder frequencyPenalty(double v) { frequencyPenalty = v; return this; }

        public Builder repetitionPenalty(double v) { repetitionPenalty = v; return this; }

        public Builder maxTokens(int v) { maxTokens = v; return this; }

        public Builder minTokens(int v) { minTokens = v; return this; }

        public Builder stop(List<String> v) { stop = v; return this; }

        public Builder stopTokenIds(Set<Integer> v) { stopTokenIds = v; return this; }

        public Builder ignoreEos(boolean v) { ignoreEos = v; return this; }

        public Builder logprobs(Integer v) { logprobs = v; return this; }

        public Builder promptLogprobs(Integer v) { promptLogprobs = v; return this; }

        public Integer promptLogprobs() { return promptLogprobs; }

        public Builder includeStopStrInOutput(boolean v) { includeStopStrInOutput = v; return this; }

        public Builder skipSpecialTokens(boolean v) { skipSpecialTokens = v; return this; }

        /**
         * The parameters of a request, checked against the range vLLM accepts.
         *
         * @param maxLogprobs server cap on {@code logprobs} / {@code prompt_logprobs}
         * @param vocabSize   model vocabulary, bounds {@code stop_token_ids}
         * @throws SamplingParameterException naming the first offending field
         */
        public SamplingParams build(int maxLogprobs, int vocabSize) {
            SamplingParams p = build();
            p.validate(maxLogprobs, vocabSize);
            return p;
        }

        /** Without checks: for values the server chose (tests, scoring requests). */
        public SamplingParams build() {
            return new SamplingParams(temperature, topP, topK, minP, seed, presencePenalty, frequencyPenalty,
                    repetitionPenalty, maxTokens, minTokens, stop, stopTokenIds, ignoreEos, logprobs, promptLogprobs,
                    includeStopStrInOutput, skipSpecialTokens);
        }
    }
}
