package io.strata.platform.engine;

import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.engine.sampling.StopStringMatcher;
import io.strata.platform.engine.sampling.TokenHistory;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One choice inside the engine: the request's one record. Its tokens, computed positions, lifecycle and
 * preemptions live in its {@link KvRequest} (created at submit; the KV manager changes it), the sampling and
 * streaming state here. Everything but {@link #abortRequested} is touched only by the engine thread. Tokens
 * are prompt followed by output; after a preemption all of them are recomputed.
 */
public final class Sequence {

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
    /** Tokens, computed positions, state, preemptions and page tables. */
    final KvRequest kv;
    volatile boolean abortRequested;

    int cachedTokens = -1;
    boolean admittedOnce;
    long firstScheduledNanos;
    long firstTokenNanos;
    long lastTokenNanos;
    List<SampledToken> promptLogprobs;
    boolean startedSent;
    boolean finishedSent;
    boolean queueRecorded;

    Sequence(String id, long seqNo, KvRequest kv, SamplingParams params, int priority, String cacheSalt,
             TextCodec codec, long fallbackSeed) {
        this.id = id;
        this.seqNo = seqNo;
        this.arrivalNanos = System.nanoTime();
        this.priority = priority;
        this.cacheSalt = cacheSalt;
        this.params = params;
        this.kv = kv;
        int[] prompt = kv.tokens(0, kv.tokenCount());
        this.promptLength = prompt.length;
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
        return kv.tokenCount();
    }

    public int token(int i) {
        return kv.token(i);
    }

    /** A copy of tokens [from, to). */
    public int[] tokens(int from, int to) {
        return kv.tokens(from, to);
    }

    public int promptLength() {
        return promptLength;
    }

    public int outputLength() {
        return length() - promptLength;
    }

    /** Positions whose KV is written. */
    public int numComputed() {
        return (int) kv.computed();
    }

    /** The KV record (page tables, sharing bounds) a step's block tables are built from. */
    public KvRequest kv() {
        return kv;
    }

    public String cacheSalt() {
        return cacheSalt;
    }

    KvRequest.State state() {
        return kv.state();
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
        return wantsPromptLogprobs() ? promptLogprobs.size() - 1 : length();
    }

    void append(int token) {
        kv.appendToken(token);
        history.addGenerated(token);
    }

    /** Queued prompt tokens not yet prefilled (for {@code max-queued-tokens}). */
    int pendingPrefill() {
        return Math.max(0, promptLength - numComputed());
    }
}
