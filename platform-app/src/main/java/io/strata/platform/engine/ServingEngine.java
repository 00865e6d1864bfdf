package io.strata.platform.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.engine.kv.BlockHash;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvCacheStats;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.KvUsage;
import io.strata.platform.engine.sampling.BatchSampler;
import io.strata.platform.engine.sampling.Logprobs;
import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.StopStringMatcher;
import io.strata.platform.engine.sampling.TopLogprobs;
import io.strata.platform.workers.WorkerCrashedException;
import io.strata.platform.workers.WorkerDownException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine: one platform thread runs the loop (schedule → backend step → sample → stream), so Reactor
 * threads never block on model work; a step with many rows to sample spreads them over a small pool of the
 * engine's own ({@code strata.engine.sampling-threads}), with the same tokens as sampling them one by one.
 * Requests and aborts reach it through a lock-free inbox. A backend failure fails the sequences of that step
 * only; three failed steps in a row mark the backend unusable (health DOWN, new requests 503), and so does a
 * worker process its supervisor gave up on, as soon as the loop sees it (before the next step; no request has
 * to fail first). After every step the loop publishes an {@link EngineSnapshot}; other threads read the engine
 * only through it. (Over ~400 lines so that the engine thread's whole life —
 * submit, loop, step, sampling, finish — reads top to bottom in one file.)
 */
public final class ServingEngine implements InferenceEngine, TunableEngine, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServingEngine.class);
    private static final int FAILED_STEPS_BEFORE_DOWN = 3;

    private sealed interface Command {
        record Add(Sequence seq) implements Command {
        }

        record Abort(Sequence seq) implements Command {
        }
    }

    private final ModelCard model;
    private final TextCodec codec;
    private volatile EngineProperties props;
    /** Limits saved while running, taken by the engine thread before its next step. */
    private final java.util.concurrent.atomic.AtomicReference<EngineProperties> pendingLimits =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final KvCacheManager kv;
    private final StepRunner executor;
    private final Scheduler scheduler;
    private final BatchSampler sampler;
    private final EngineMetrics metrics;
    private final ConcurrentLinkedQueue<Command> inbox = new ConcurrentLinkedQueue<>();
    private final LiveSequences live = new LiveSequences();
    private final AtomicInteger queuedRequests = new AtomicInteger();
    private final AtomicLong queuedTokens = new AtomicLong();
    private final AtomicLong seqNo = new AtomicLong();
    private final SplittableRandom seeds = new SplittableRandom();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile EngineStatus status = new EngineStatus(true, "");
    private volatile int runningGauge;
    private volatile int waitingGauge;
    private volatile double kvUsageGauge;
    private volatile long stepsCompleted;
    private volatile EngineSnapshot snapshot;
    private long requestsBuiltAt;
    private int consecutiveFailures;
    private final AutoCloseable onClose;
    private final EngineRank rank;
    /** Data-parallel ranks only: tokens whose KV the rank's sequences hold, as of the latest step. */
    private volatile long heldTokens;
    /** Data-parallel ranks only: the prefix cache's block hashes, rebuilt when the KV manager's version moves. */
    private volatile Set<BlockHash> cachedBlocks = Set.of();
    private long cachedBlocksVersion = -1;

    /**
     * @param onClose releases the backend's model (weights, KV pools); the loop calls it once, after it stopped
     */
    public ServingEngine(ModelCard model, TextCodec codec, EngineProperties props, KvCacheManager kv, StepRunner executor,
                         MeterRegistry registry, AutoCloseable onClose) {
        this(model, codec, props, kv, executor, registry, onClose, EngineRank.SINGLE, SamplingProperties.defaults());
    }

    /**
     * @param rank     which data-parallel rank this loop serves ({@link EngineRank#SINGLE} when there is one);
     *                 a rank of several also publishes its load and prefix blocks for the {@link RankRouter}
     * @param sampling how many threads sample a step's rows (this engine's own pool)
     */
    public ServingEngine(ModelCard model, TextCodec codec, EngineProperties props, KvCacheManager kv, StepRunner executor,
                         MeterRegistry registry, AutoCloseable onClose, EngineRank rank, SamplingProperties sampling) {
        this.rank = rank;
        this.onClose = onClose;
        this.model = model;
        this.codec = codec;
        this.props = props;
        this.kv = kv;
        this.executor = executor;
        this.scheduler = new Scheduler(kv, props.maxNumBatchedTokens(), props.maxNumSeqs(), props.priorityPolicy(),
                props.longPrefillTokenThreshold());
        this.sampler = new BatchSampler(executor.vocab(), sampling.samplingThreads(), rank.samplerThreadPrefix());
        this.metrics = new EngineMetrics(registry, model.id(), rank.meterTags(), () -> runningGauge, () -> waitingGauge,
                () -> kvUsageGauge);
        this.snapshot = new EngineSnapshot(0, 0, 0, kv.capacity(), kv.usage(), KvCacheStats.Reading.NONE, List.of());
        this.thread = Thread.ofPlatform().name(rank.threadName()).daemon().start(this::loop);
    }

    @Override
    public ModelCard model() {
        return model;
    }

    @Override
    public TextCodec codec() {
        return codec;
    }

    @Override
    public EngineStatus status() {
        return status;
    }

    /** Page accounting as of the latest published snapshot (any thread; a step behind while busy). */
    public KvUsage kvUsage() {
        return snapshot.kv();
    }

    @Override
    public Optional<EngineSnapshot> snapshot() {
        return Optional.of(snapshot);
    }

    public int runningCount() {
        return runningGauge;
    }

    public int waitingCount() {
        return waitingGauge;
    }

    /** Choices queued or running (what {@code max-queued-requests} counts). */
    public int inFlight() {
        return queuedRequests.get();
    }

    public long stepsCompleted() {
        return stepsCompleted;
    }

    /** Steps whose rows were sampled on several threads. */
    long parallelSampledSteps() {
        return sampler.parallelBatches();
    }

    public EngineRank rank() {
        return rank;
    }

    /**
     * What the {@link RankRouter} needs, from what this rank published (any thread): whether it serves, its
     * load (held tokens as of the latest step plus prompt tokens queued since submit) and its prefix blocks.
     * Only a rank of several publishes held tokens and blocks; a single engine reports its queue only.
     */
    public RankView rankView() {
        return new RankView(rank.index(), status.up() && running, heldTokens + queuedTokens.get(), cachedBlocks);
    }

    @Override
    public List<RankLoad> rankLoads() {
        return List.of(RankLoad.of(rankView(), snapshot));
    }

    @Override
    public boolean abort(String requestId) {
        return live.abort(requestId);
    }

    @Override
    public Submission submit(GenerationRequest request) {
        if (!status.up() || !running) {
            throw new EngineUnavailableException("The engine is not serving: " + status.detail());
        }
        EngineProperties limits = props;
        int prompt = request.promptTokens().length;
        int total = prompt + request.params().maxTokens();
        if (!kv.capacity().canEverFit(total, limits.chunkLimit())) {
            throw new io.strata.platform.engine.sampling.SamplingParameterException("max_tokens", "prompt + max_tokens = "
                    + total + " tokens is more than the KV cache of this server can hold for one sequence; lower max_tokens");
        }
        if (queuedRequests.incrementAndGet() > limits.maxQueuedRequests()) {
            queuedRequests.decrementAndGet();
            throw new QueueFullException("The request queue is full (max-queued-requests=" + limits.maxQueuedRequests()
                    + "). Retry later.");
        }
        if (queuedTokens.addAndGet(prompt) > limits.maxQueuedTokens()) {
            queuedTokens.addAndGet(-prompt);
            queuedRequests.decrementAndGet();
            throw new QueueFullException("The request queue is full (max-queued-tokens=" + limits.maxQueuedTokens()
                    + " prompt tokens waiting). Retry later.");
        }
        long fallbackSeed;
        synchronized (seeds) {
            fallbackSeed = seeds.nextLong();
        }
        KvRequest kvRecord = kv.newRequest(request.requestId(), request.promptTokens(), request.cacheSalt());
        Sequence seq = new Sequence(request.requestId(), seqNo.incrementAndGet(), kvRecord,
                request.params(), request.priority(), request.cacheSalt(), codec, fallbackSeed);
        Submission submission = new Submission() {
            @Override
            public Flux<GenerationEvent> events() {
                return seq.sink.asFlux().doOnCancel(this::abort);
            }

            @Override
            public void abort() {
                if (!seq.abortRequested) {
                    seq.abortRequested = true;
                    inbox.add(new Command.Abort(seq));
                    LockSupport.unpark(thread);
                }
            }
        };
        live.add(seq, submission);
        inbox.add(new Command.Add(seq));
        LockSupport.unpark(thread);
        return submission;
    }

    /** The limits in force (queue limits at once, scheduler limits from the next step after a change). */
    @Override
    public EngineProperties limits() {
        return props;
    }

    /**
     * Applies new limits while serving: the queue limits to the next submission, the scheduler's step
     * budget, {@code max-num-seqs} and chunk cap on the engine thread before its next step (running
     * sequences keep their pages; a lower {@code max-num-seqs} only stops admissions until enough finish).
     * The scheduling policy is fixed at start.
     */
    @Override
    public void applyLimits(EngineProperties newLimits) {
        if (!newLimits.policy().equals(props.policy())) {
            throw new IllegalArgumentException("strata.scheduler.policy cannot change while serving");
        }
        props = newLimits;
        pendingLimits.set(newLimits);
        LockSupport.unpark(thread);
    }

    private void loop() {
        try {
            serve();
        } finally {
            // the loop is the only user of the sampler pool and of the backend: it releases both once it stopped,
            // so a step still running when close() stops waiting never finds its model released under it
            sampler.close();
            try {
                onClose.close();
            } catch (Exception e) {
                log.warn("Closing the backend failed: {}", e.toString());
            }
        }
    }

    private void serve() {
        while (running) {
            try {
                EngineProperties limits = pendingLimits.getAndSet(null);
                if (limits != null) {
                    scheduler.limits(limits.maxNumBatchedTokens(), limits.maxNumSeqs(), limits.longPrefillTokenThreshold());
                }
                drainInbox();
                checkBackendDown();
                if (scheduler.idle()) {
                    publishGauges();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    continue;
                }
                step();
            } catch (Throwable t) {
                // never let the loop die: fail what is in flight and carry on
                log.error("Engine loop error", t);
                for (Sequence s : scheduler.all()) {
                    finish(s, FinishReason.ERROR, null, "engine error: " + t);
                }
            }
        }
        drainInbox();
        for (Sequence s : scheduler.all()) {
            finish(s, FinishReason.ABORT, null, null);
        }
    }

    /**
     * Marks the backend unusable as soon as it says it can never serve again (its worker process is down for
     * good), idle or not, so readiness goes down without a request having to fail first.
     */
    private void checkBackendDown() {
        if (!status.up()) {
            return;
        }
        Optional<String> down = executor.down();
        if (down.isPresent()) {
            // the supervisor logged the ERROR line; this says what follows from it
            status = new EngineStatus(false, down.get());
            log.warn("Backend marked unusable: {}", status.detail());
            for (Sequence s : scheduler.all()) {
                finish(s, FinishReason.ERROR, null, status.detail());
            }
        }
    }

    private void drainInbox() {
        Command c;
        while ((c = inbox.poll()) != null) {
            switch (c) {
                case Command.Add a -> {
                    if (a.seq().abortRequested) {
                        finish(a.seq(), FinishReason.ABORT, null, null);
                    } else {
                        scheduler.add(a.seq());
                    }
                }
                case Command.Abort a -> {
                    if (a.seq().state() != KvRequest.State.FINISHED) {
                        finish(a.seq(), FinishReason.ABORT, null, null);
                    }
                }
            }
        }
    }

    private void step() {
        executor.kvLost().ifPresent(this::kvLost);
        Scheduler.Plan plan = scheduler.schedule();
        if (!plan.preempted().isEmpty()) {
            metrics.preempted(plan.preempted().size());
        }
        for (Sequence s : plan.unservable()) {
            finish(s, FinishReason.ERROR, null, "the KV cache cannot hold this sequence (" + s.length()
                    + " tokens) even with nothing else running; lower max_tokens or give the KV cache more memory");
        }
        publishGauges();
        if (plan.isEmpty()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            return;
        }
        for (StepRunner.Chunk c : plan.chunks()) {
            Sequence s = c.seq();
            if (!s.queueRecorded) {
                s.queueRecorded = true;
                metrics.queued(s.firstScheduledNanos - s.arrivalNanos);
            }
        }
        StepRunner.Output out;
        int tokens = 0;
        for (StepRunner.Chunk c : plan.chunks()) {
            tokens += c.count();
        }
        try {
            out = executor.execute(plan.chunks());
            consecutiveFailures = 0;
        } catch (RuntimeException | Error e) {
            metrics.stepFailed();
            consecutiveFailures++;
            // the supervisor has logged the crash (the one WARN line) and restarts the worker, or has logged that it
            // gave up on it (the one ERROR line): no stack trace for either
            boolean workerDown = e.getCause() instanceof WorkerDownException;
            if (workerDown || e.getCause() instanceof WorkerCrashedException) {
                log.info("Backend step failed ({} sequences affected): {}", plan.chunks().size(), e.getMessage());
            } else {
                log.error("Backend step failed ({} sequences affected)", plan.chunks().size(), e);
            }
            // a worker that will not be restarted cannot serve another step: no need to fail two more
            boolean down = workerDown || consecutiveFailures >= FAILED_STEPS_BEFORE_DOWN;
            if (down) {
                // before any stream ends, so a client that sees the error also sees health DOWN
                status = new EngineStatus(false, workerDown ? e.getCause().getMessage() : "backend failed "
                        + consecutiveFailures + " steps in a row; last error: " + e.getMessage());
                if (workerDown) {
                    log.warn("Backend marked unusable: {}", status.detail());
                } else {
                    log.error("Backend marked unusable: {}", status.detail());
                }
            }
            for (StepRunner.Chunk c : plan.chunks()) {
                finish(c.seq(), FinishReason.ERROR, null, "backend error: " + e.getMessage());
            }
            if (down) {
                for (Sequence s : scheduler.all()) {
                    finish(s, FinishReason.ERROR, null, status.detail());
                }
            }
            return;
        }
        metrics.step(tokens);
        stepsCompleted++;
        // the logits are the backend's buffer until its next step: read here, only the sampled tokens are kept
        int vocab = out.vocab();
        int row = 0;
        // the choices that sample a token this step, in chunk order, and their rows
        List<Sequence> sampling = new ArrayList<>(plan.chunks().size());
        List<BatchSampler.Row> samplingRows = new ArrayList<>(plan.chunks().size());
        // per choice in `sampling`, the token the backend returned (it took the argmax where the logits are), or
        // null for a row sampled here
        List<SampledToken> returned = new ArrayList<>(plan.chunks().size());
        for (StepRunner.Chunk c : plan.chunks()) {
            Sequence s = c.seq();
            scheduler.advance(c);
            int lastRow = -1;
            switch (c.logits()) {
                case NONE -> {
                }
                case LAST -> lastRow = row++;
                case ALL -> {
                    for (int p = c.start(); p < c.start() + c.count(); p++, row++) {
                        if (p + 1 < s.promptLength() && s.promptLogprobs.size() == p + 1) {
                            s.promptLogprobs.add(Logprobs.of(out.logits(), out.offset(row), vocab, s.token(p + 1),
                                    s.params.promptLogprobs()));
                        }
                        lastRow = row;
                    }
                }
            }
            if (s.state() == KvRequest.State.FINISHED || s.numComputed() < s.length()) {
                continue;
            }
            if (!s.startedSent) {
                s.startedSent = true;
                emit(s, new GenerationEvent.Started(s.promptLength(), Math.max(0, s.cachedTokens),
                        s.firstScheduledNanos - s.arrivalNanos, s.promptLogprobs));
                queuedTokens.addAndGet(-s.promptLength());
            }
            sampling.add(s);
            if (out.token(lastRow) >= 0) {
                returned.add(new SampledToken(out.token(lastRow), Float.NaN, 0, TopLogprobs.NONE));
            } else {
                returned.add(null);
                samplingRows.add(new BatchSampler.Row(out.offset(lastRow), s.params, s.history, s.rng));
            }
        }
        // sampling a row touches only that choice's own state (its generator; its history, read), so all rows
        // may be sampled first, in parallel when there are many; accepting stays on this thread, in chunk order
        SampledToken[] sampled = sampler.sample(out.logits(), samplingRows, codec.eosTokenId());
        for (int i = 0, k = 0; i < sampling.size(); i++) {
            SampledToken t = returned.get(i);
            accept(sampling.get(i), t != null ? t : sampled[k++]);
        }
        publishGauges();
    }

    /**
     * The backend's KV pools were replaced by empty ones (its worker restarted): every sequence holding pages
     * fails, and the prefix cache is dropped so that no later request hits a page computed before. Waiting and
     * preempted sequences hold no pages and are kept.
     */
    private void kvLost(String why) {
        for (Sequence s : scheduler.all()) {
            if (s.kv().state() == KvRequest.State.RUNNING) {
                finish(s, FinishReason.ERROR, null, "backend error: " + why);
            }
        }
        int dropped = kv.dropPrefixCache();
        // only a worker crash loses the KV, and the supervisor has logged that as a WARN already
        log.info("The backend lost its KV cache: failed the running requests and dropped {} cached pages ({})", dropped, why);
    }

    private void accept(Sequence s, SampledToken t) {
        long now = System.nanoTime();
        if (s.firstTokenNanos == 0) {
            s.firstTokenNanos = now;
            metrics.firstToken(now - s.arrivalNanos);
        } else {
            metrics.interToken(now - s.lastTokenNanos);
        }
        s.lastTokenNanos = now;
        metrics.generated();
        int token = t.token();
        s.append(token);
        List<SampledToken> lps = t.hasLogprob() ? List.of(t) : null;
        boolean eos = token == codec.eosTokenId() && !s.params.ignoreEos();
        boolean stopToken = s.params.stopTokenIds().contains(token);
        String text = eos || stopToken ? "" : s.decoder.next(token);
        StopStringMatcher.Step stop = s.stops.accept(text);
        if (stop.stopped()) {
            emit(s, new GenerationEvent.Delta(new int[]{token}, stop.emit(), lps));
            finish(s, FinishReason.STOP, stop.matchedStop(), null);
            return;
        }
        boolean length = s.outputLength() >= s.params.maxTokens() || s.length() >= model.maxModelLen();
        if (eos || stopToken || length) {
            String rest = stop.emit() + s.stops.accept(s.decoder.finish()).emit() + s.stops.flush();
            emit(s, new GenerationEvent.Delta(new int[]{token}, rest, lps));
            finish(s, eos || stopToken ? FinishReason.STOP : FinishReason.LENGTH, stopToken ? token : null, null);
            return;
        }
        emit(s, new GenerationEvent.Delta(new int[]{token}, stop.emit(), lps));
    }

    private void emit(Sequence s, GenerationEvent e) {
        s.sink.tryEmitNext(e);
    }

    private void finish(Sequence s, FinishReason reason, Object stopReason, String error) {
        if (s.finishedSent) {
            return;
        }
        s.finishedSent = true;
        try {
            scheduler.remove(s);
        } catch (RuntimeException e) {
            // the client must still hear that its request ended, whatever the KV bookkeeping says
            log.error("Freeing the pages of {} failed", s.id, e);
        }
        live.remove(s);
        if (!s.startedSent) {
            queuedTokens.addAndGet(-s.promptLength());
        }
        queuedRequests.decrementAndGet();
        metrics.finished(reason, s.promptLength(), Math.max(0, s.cachedTokens), System.nanoTime() - s.arrivalNanos);
        emit(s, new GenerationEvent.Finished(reason, stopReason, s.promptLength(), Math.max(0, s.cachedTokens),
                s.outputLength(), error));
        s.sink.tryEmitComplete();
    }

    /** Publishes the gauges and a new {@link EngineSnapshot} (engine thread). */
    private void publishGauges() {
        runningGauge = scheduler.runningCount();
        waitingGauge = scheduler.waitingCount();
        KvUsage u = kv.usage();
        kvUsageGauge = u.usedFraction();
        long now = System.nanoTime();
        List<EngineSnapshot.Request> requests = snapshot.requests();
        if (now - requestsBuiltAt >= EngineSnapshot.REQUESTS_EVERY_NANOS) {
            requests = EngineSnapshot.requestsOf(scheduler.all(), kv.layout());
            requestsBuiltAt = now;
        }
        snapshot = new EngineSnapshot(stepsCompleted, runningGauge, waitingGauge, kv.capacity(), u, kv.stats().reading(),
                requests);
        if (rank.dataParallel()) {
            publishRankLoad();
        }
    }

    /** Held tokens and, when the prefix cache changed, its block hashes, for the router (engine thread). */
    private void publishRankLoad() {
        long held = 0;
        for (Sequence s : scheduler.all()) {
            held += s.numComputed();
        }
        heldTokens = held;
        long version = kv.cachedBlocksVersion();
        if (version != cachedBlocksVersion) {
            cachedBlocksVersion = version;
            cachedBlocks = kv.cachedBlocks();
        }
    }

    /**
     * Stops the loop; everything still queued or running finishes with reason ABORT, then the loop releases the
     * backend. Waits up to 10 s for that; a step still running then releases the backend when it returns.
     */
    @Override
    public void close() throws InterruptedException {
        close(Duration.ofSeconds(10));
    }

    void close(Duration grace) throws InterruptedException {
        running = false;
        status = new EngineStatus(false, "shutting down");
        LockSupport.unpark(thread);
        if (!thread.join(grace)) {
            log.warn("The engine loop is still in a step after {} ms; its backend is released when the step returns",
                grace.toMillis());
        }
    }
}
