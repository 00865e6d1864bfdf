package io.strata.platform.workers;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A {@link ModelExecutor} whose model runs in a worker process ({@link WorkerMain}), reached over
 * {@link WorkerProtocol}. A worker that dies fails the call in flight with a {@link WorkerCrashedException}
 * saying how it ended; {@link WorkerSupervisor} restarts it and this executor re-allocates the same KV pools on
 * the new one. Because the new pools hold nothing, the engine must hear of the loss before it plans the next
 * step: {@link #takeKvLoss()} reports each crash once, and until it has been taken every {@code execute} fails
 * rather than run stale block tables on fresh pools.
 */
public final class RemoteExecutor implements ModelExecutor {
    private final WorkerSupervisor supervisor;
    private final ModelConfig config;
    private final Duration startTimeout;
    private final Duration stepTimeout;
    private volatile KvLayout layout;
    private volatile Map<PageBucket, Integer> pages;
    /** Crashes the engine has been told of (engine thread). */
    private int deathsTaken;

    private RemoteExecutor(WorkerSupervisor supervisor, ModelConfig config, WorkerProperties props) {
        this.supervisor = supervisor;
        this.config = config;
        this.startTimeout = props.workerStartTimeout();
        this.stepTimeout = props.workerStepTimeout();
    }

    /**
     * Starts the worker and waits until it has loaded the model.
     *
     * @param config the model's config (the platform has loaded it already; the worker loads its own copy)
     * @param state  receives the worker's state on every change (the console's Serving backend card)
     * @throws IllegalStateException naming the worker's exit code and last stderr lines when it cannot start
     */
    public static RemoteExecutor start(WorkerLaunch launch, ModelConfig config, WorkerProperties props,
                                       MeterRegistry registry, Consumer<WorkerState> state) {
        WorkerSupervisor supervisor = new WorkerSupervisor(launch, props, registry, state);
        try {
            supervisor.start();
        } catch (RuntimeException e) {
            supervisor.close();
            throw e;
        }
        RemoteExecutor executor = new RemoteExecutor(supervisor, config, props);
        supervisor.onRestart(executor::reallocate);
        return executor;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public BackendCapabilities capabilities() {
        return call(worker(), WorkerProtocol.CAPABILITIES, ByteBuffer.allocate(0), WorkerProtocol::capabilities);
    }

    @Override
    public long weightBytes() {
        return worker().weightBytes();
    }

    @Override
    public KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages) {
        KvPools pools = allocate(worker(), layout, pages);
        this.layout = layout;
        this.pages = Map.copyOf(pages);
        return pools;
    }

    @Override
    public StepResult execute(StepBatch batch) {
        if (supervisor.deaths() != deathsTaken) {
            throw new WorkerCrashedException(supervisor.lastCrash());
        }
        WorkerProcess w = worker();
        ScheduledFuture<?> watchdog = supervisor.watchdog(w, stepTimeout);
        try {
            return call(w, WorkerProtocol.EXECUTE, WorkerProtocol.batch(batch), WorkerProtocol::result);
        } finally {
            watchdog.cancel(false);
        }
    }

    /**
     * Once per worker crash, what ended it: the worker's KV pools were replaced by empty ones, so every page the
     * engine holds or caches is garbage. Engine thread.
     */
    public Optional<String> takeKvLoss() {
        int deaths = supervisor.deaths();
        if (deaths == deathsTaken) {
            return Optional.empty();
        }
        deathsTaken = deaths;
        return Optional.ofNullable(supervisor.lastCrash());
    }

    /** Why this executor can never serve again (its worker is down for good), or empty. */
    public Optional<String> down() {
        return supervisor.down();
    }

    @Override
    public Optional<DeviceMemory> deviceMemory() {
        return call(worker(), WorkerProtocol.DEVICE_MEMORY, ByteBuffer.allocate(0),
                b -> Payload.bool(b) ? Optional.of(WorkerProtocol.deviceMemory(b)) : Optional.empty());
    }

    /** Asks the worker to exit and stops supervising it. */
    @Override
    public void close() {
        supervisor.close(w -> call(w, WorkerProtocol.CLOSE, ByteBuffer.allocate(0), b -> null));
    }

    private WorkerProcess worker() {
        return supervisor.ready(startTimeout);
    }

    /** The restart hook: the new worker gets the pools the engine sized, before it serves a step. */
    private void reallocate(WorkerProcess w) {
        if (layout != null) {
            allocate(w, layout, pages);
        }
    }

    private KvPools allocate(WorkerProcess w, KvLayout layout, Map<PageBucket, Integer> pages) {
        return call(w, WorkerProtocol.ALLOCATE_KV, WorkerProtocol.allocateRequest(layout, pages),
                b -> WorkerProtocol.pools(layout, b));
    }

    private <T> T call(WorkerProcess w, byte type, ByteBuffer body, Function<ByteBuffer, T> decode) {
        FrameChannel.Frame reply;
        try {
            reply = w.channel().call(type, body);
        } catch (IOException e) {
            throw new WorkerCrashedException(supervisor.died(w));
        }
        if (reply.type() == WorkerProtocol.ERROR) {
            throw WorkerProtocol.error(reply.body());
        }
        if (reply.type() != type) {
            throw new IllegalStateException(w.name() + " answered request " + type + " with " + reply.type());
        }
        return decode.apply(reply.body());
    }
}
