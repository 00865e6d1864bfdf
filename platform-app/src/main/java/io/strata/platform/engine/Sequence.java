package io.strata.platform.engine;

import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.engine.sampling.StopStringMatcher;
import io.strata.platform.engine.sampling.TokenHistory;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One choice inside the engine. Everything but {@link #abortRequested} is touched only by the engine
 * thread. Tokens are prompt followed by output; after a preemption all of them are recomputed.
 */
public final class Sequence {
    public enum Status { WAITING, RUNNING, FINISHED }

    final String id;
    final long arrivalNanos;
    final long seqNo;
    final int priority;
    final String cacheSalt;
    final SamplingParams params;
    final int promptLength;
    final SplittableRandom rng;
    final TokenHistory history;
    final TextCodec.IncrementalDecoder decoder;
    final StopStringMatcher stops;
    final Sinks.Many<GenerationEvent> sink;
    volatile boolean abortRequested;

    private int[] tokens;
    private int length;
    int numComputed;
    int cachedTokens = -1;
    Status status = Status.WAITING;
    boolean admittedOnce;
    int preemptions;
    long firstScheduledNanos;
    long firstTokenNanos;
    long lastTokenNanos;
    List<SampledToken> promptLogprobs;
    boolean startedSent;
    boolean finishedSent;
    boolean queueRecorded;
    /** Opaque per-sequence state of the KV cache (block tables); owned by the {@link KvCache}. */
    Object kvState;

    Sequence(String id, long seqNo, int[] prompt, SamplingParams params, int priority, String cacheSalt,
             TextCodec codec, long fallbackSeed) {
        this.id = id;
        this.seqNo = seqNo;
        this.arrivalNanos = System.nanoTime();
        this.priority = priority;
        this.cacheSalt = cacheSalt;
        this.params = params;
        this.promptLength = prompt.length;
        this.tokens = Arrays.copyOf(prompt, prompt.length + Math.min(params.maxTokens(), 256));
        this.length = prompt.length;
        this.rng = new SplittableRandom(params.seed() != null ? params.seed() : fallbackSeed);
        this.history = new TokenHistory(prompt);
        this.decoder = codec.newDecoder(params.skipSpecialTokens());
        this.stops = new StopStringMatcher(params.stop(), params.includeStopStrInOutput());
        this.sink = Sinks.many().unicast().onBackpressureBuffer();
        if (params.promptLogprobs() != null) {
            promptLogprobs = new ArrayList<>(prompt.length);
            promptLogprobs.add(null);
        }
    }

    public String id() {
        return id;
    }

    /** Prompt + generated tokens. */
    public int length() {
        return length;
    }

    public int token(int i) {
        return tokens[i];
    }

    /** A copy of tokens [from, to). */
    public int[] tokens(int from, int to) {
        return Arrays.copyOfRange(tokens, from, to);
    }

    /** The backing array (read-only for callers; valid up to {@link #length()}). */
    int[] tokenArray() {
        return tokens;
    }

    public int promptLength() {
        return promptLength;
    }

    public int outputLength() {
        return length - promptLength;
    }

    public int numComputed() {
        return numComputed;
    }

    public String cacheSalt() {
        return cacheSalt;
    }

    public Object kvState() {
        return kvState;
    }

    public void kvState(Object state) {
        this.kvState = state;
    }

    boolean wantsPromptLogprobs() {
        return promptLogprobs != null && promptLogprobs.size() < promptLength;
    }

    /**
     * First position whose logits this sequence still needs, so the prefix cache must not serve it: the one
     * predicting the first prompt token without a logprob yet, else the end (only the last token is needed,
     * and a cache hit never covers it).
     */
    int logitsNeededFrom() {
        return wantsPromptLogprobs() ? promptLogprobs.size() - 1 : length;
    }

    void append(int token) {
        if (length == tokens.length) {
            tokens = Arrays.copyOf(tokens, Math.max(tokens.length * 2, 16));
        }
        tokens[length++] = token;
        history.addGenerated(token);
    }

    /** Queued prompt tokens not yet prefilled (for {@code max-queued-tokens}). */
    int pendingPrefill() {
        return Math.max(0, promptLength - numComputed);
    }
}
