package io.strata.platform.workers;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Owns one worker process's life: starts it, notices its death (process exit, end of channel, a step that
 * outlived its timeout, a worker that went silent past the heartbeat timeout — the last two are killed first),
 * reports it (one WARN line, {@code strata_worker_restarts_total}, the published {@link WorkerState}) and
 * restarts it on its own thread, running the restart hook (re-allocating the KV pools) before the new worker
 * serves. It is left {@code failed} (and every call on it throws {@link WorkerDownException}, which takes the
 * backend out of service) when three restart attempts in a row fail, or when it crash-loops: a crash that would
 * need more than {@code strata.engine.worker-max-restarts} restarts within {@code worker-restart-window} is not
 * restarted, since a worker that starts fine but dies on every step would otherwise fail every request forever.
 */
final class WorkerSupervisor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerSupervisor.class);
    private static final int RESTART_ATTEMPTS = 3;

    private final WorkerLaunch launch;
    private final Duration startTimeout;
    private final Duration heartbeatTimeout;
    private final Duration heartbeatInterval;
    private final int maxRestarts;
    private final Duration restartWindow;
    private final Counter restartsCounter;
    private final Consumer<WorkerState> publish;
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2,
            Thread.ofPlatform().daemon().name("strata-worker-supervisor-", 0).factory());
    private final Object lock = new Object();
    private volatile Consumer<WorkerProcess> onRestart = w -> { };
    // guarded by lock
    private WorkerProcess current;
    private boolean closing;
    private String failure;
    private RestartWindow recentRestarts;
    private volatile int deaths;
    private volatile int restarts;
    private volatile String lastCrash;
    private volatile Instant lastCrashAt;
    /** When the heartbeat check last ran (timer thread only). */
    private long lastCheckNanos;

    WorkerSupervisor(WorkerLaunch launch, WorkerProperties props, MeterRegistry registry, Consumer<WorkerState> publish) {
        this.launch = launch;
        this.startTimeout = props.workerStartTimeout();
        this.heartbeatTimeout = props.workerHeartbeatTimeout();
        this.heartbeatInterval = props.workerHeartbeatInterval();
        this.publish = publish;
        this.maxRestarts = props.workerMaxRestarts();
        this.restartWindow = props.workerRestartWindow();
        this.recentRestarts = props.restartWindow();
        this.restartsCounter = Counter.builder("strata.worker_restarts").tag("worker", launch.name())
                .description("Worker processes that crashed and were restarted").register(registry);
    }

    /** First start, on the caller's thread; throws (with the exit code and stderr) when the worker cannot start. */
    void start() {
        WorkerProcess w = WorkerProcess.start(launch, startTimeout, heartbeatInterval);
        synchronized (lock) {
            current = w;
        }
        watch(w);
        timer.scheduleWithFixedDelay(this::checkHeartbeat, heartbeatInterval.toMillis(), heartbeatInterval.toMillis(),
                TimeUnit.MILLISECONDS);
        log.info("{} serves backend '{}' (pid {})", launch.name(), launch.pluginId(), w.pid());
        publish("running");
    }

    /** Runs before a restarted worker serves (the remote executor re-allocates its KV pools). */
    void onRestart(Consumer<WorkerProcess> hook) {
        this.onRestart = hook;
    }

    /** Crashes noticed so far; a change means the worker's KV is gone. */
    int deaths() {
        return deaths;
    }

    /** Why the supervisor gave up on the worker (it is not restarted again); empty while it serves or restarts. */
    Optional<String> down() {
        synchronized (lock) {
            return Optional.ofNullable(failure).map(f -> launch.name() + " is down: " + f);
        }
    }

    String lastCrash() {
        return lastCrash;
    }

    /**
     * The serving worker, waiting up to {@code timeout} while a restart is under way.
     *
     * @throws IllegalStateException when restarts gave up, the platform is closing, or the wait timed out
     */
    WorkerProcess ready(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (true) {
                if (closing) {
                    throw new IllegalStateException(launch.name() + " is shutting down");
                }
                if (failure != null) {
                    throw new WorkerDownException(launch.name() + " is down: " + failure);
                }
                if (current != null && !current.dead()) {
                    return current;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(launch.name() + " is still restarting after " + timeout.toSeconds() + " s");
                }
                try {
                    lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for " + launch.name(), e);
                }
            }
        }
    }

    /** Kills {@code w} as hung unless the returned future is cancelled within {@code timeout}. */
    ScheduledFuture<?> watchdog(WorkerProcess w, Duration timeout) {
        return timer.schedule(() -> w.kill("a step ran over " + timeout.toSeconds() + " s (strata.engine.worker-step-timeout)"),
                timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Records that {@code w} is gone (idempotent: the first caller describes and reports it, later ones get the
     * same description) and starts a restart, unless that restart would be one more than the restart window
     * allows: then the worker is left failed. Returns the message for the failed call.
     */
    String died(WorkerProcess w) {
        if (!w.markDead()) {
            return w.ended().join();
        }
        String message = launch.name() + " (backend '" + launch.pluginId() + "', pid " + w.pid() + ") "
                + (w.killed() ? "hung" : "crashed") + ": " + w.describeEnd();
        Instant now = Instant.now();
        boolean giveUp;
        String reason;
        synchronized (lock) {
            if (closing) {
                w.ended().complete(launch.name() + " stopped with the platform");
                return w.ended().join();
            }
            recentRestarts = recentRestarts.record(now);
            giveUp = recentRestarts.exceeded();
            if (giveUp) {
                failure = String.format(Locale.ROOT, "crash loop: it crashed %d times within %s, more than the %d "
                                + "restarts strata.engine.worker-max-restarts allows per strata.engine.worker-restart-window, "
                                + "so it is not restarted; last crash: %s",
                        recentRestarts.count(), seconds(restartWindow), maxRestarts, message);
            }
            reason = failure;
        }
        lastCrash = message;
        lastCrashAt = now;
        deaths++;
        w.ended().complete(message);
        w.close();
        if (giveUp) {
            synchronized (lock) {
                lock.notifyAll();
            }
            // an operator-visible decision, not a bug: one line, no stack trace
            log.error("{} is down: {}", launch.name(), reason);
            publish("failed");
            return message;
        }
        restartsCounter.increment();
        log.warn("{}; restarting it (its in-flight requests failed, its KV cache is lost)", message);
        publish("restarting");
        timer.execute(this::restart);
        return message;
    }

    private void watch(WorkerProcess w) {
        w.process().onExit().thenRun(() -> died(w));
    }

    /**
     * Kills the serving worker when it has sent no heartbeat for longer than the timeout; its exit then takes the
     * crash path ({@link #died}). A check that itself ran late (the platform's own JVM was paused, e.g. by a long
     * collection) blames no one: the beats may be waiting unread, so the worker gets another round.
     */
    private void checkHeartbeat() {
        long now = System.nanoTime();
        boolean late = lastCheckNanos != 0 && now - lastCheckNanos > 2 * heartbeatInterval.toNanos();
        lastCheckNanos = now;
        WorkerProcess w;
        synchronized (lock) {
            w = current;
        }
        if (late || w == null || w.dead() || w.killed() || w.heartbeat() == null) {
            return;
        }
        Duration silence = w.heartbeat().silence();
        if (silence.compareTo(heartbeatTimeout) > 0) {
            w.kill(String.format(Locale.ROOT, "no heartbeat for %.1f s (strata.engine.worker-heartbeat-timeout: %.1f s)",
                    silence.toMillis() / 1000.0, heartbeatTimeout.toMillis() / 1000.0));
        }
    }

    private void restart() {
        for (int attempt = 1; attempt <= RESTART_ATTEMPTS; attempt++) {
            WorkerProcess w = null;
            try {
                w = WorkerProcess.start(launch, startTimeout, heartbeatInterval);
                onRestart.accept(w);
                synchronized (lock) {
                    if (closing) {
                        w.close();
                        return;
                    }
                    current = w;
                    restarts++;
                    lock.notifyAll();
                }
                watch(w);
                log.info("{} restarted (pid {}, restart {})", launch.name(), w.pid(), restarts);
                publish("running");
                return;
            } catch (RuntimeException e) {
                if (w != null) {
                    w.close();
                }
                log.warn("{} restart attempt {} of {} failed: {}", launch.name(), attempt, RESTART_ATTEMPTS, e.getMessage());
                synchronized (lock) {
                    if (closing) {
                        return;
                    }
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        synchronized (lock) {
            failure = "restart failed " + RESTART_ATTEMPTS + " times; last crash: " + lastCrash;
            lock.notifyAll();
        }
        log.error("{} is down: {}", launch.name(), failure);
        publish("failed");
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }

    private void publish(String state) {
        WorkerProcess w;
        synchronized (lock) {
            w = current;
        }
        long pid = w != null && !w.dead() ? w.pid() : 0;
        publish.accept(new WorkerState(launch.name(), pid, state, restarts, lastCrash, lastCrashAt));
    }

    /** Stops supervising: {@code goodbye} asks the worker to exit, then it is killed if it has not. */
    void close(Consumer<WorkerProcess> goodbye) {
        WorkerProcess w;
        synchronized (lock) {
            closing = true;
            w = current;
            lock.notifyAll();
        }
        timer.shutdownNow();
        if (w != null && !w.dead()) {
            try {
                goodbye.accept(w);
                w.process().waitFor(5, TimeUnit.SECONDS);
            } catch (RuntimeException e) {
                log.debug("{} did not close cleanly: {}", launch.name(), e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            w.close();
        }
        if (w != null) {
            publish("stopped");
        }
    }

    @Override
    public void close() {
        close(w -> { });
    }
}
