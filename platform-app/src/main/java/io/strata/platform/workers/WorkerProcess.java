package io.strata.platform.workers;

import io.strata.spi.exec.BackendCapabilities;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One started worker process and its channels: its output relayed to the platform log line by line with the
 * worker's name as prefix (the last lines of stderr kept for crash messages), its hello read, its heartbeats
 * watched ({@link HeartbeatMonitor}), its end described ("exited with code 137; last output: ...").
 */
final class WorkerProcess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WorkerProcess.class);
    private static final int TAIL_LINES = 12;

    private final String name;
    private final Process process;
    private final Path socketDir;
    private final Deque<String> stderrTail = new ArrayDeque<>();
    private final Thread stderrPump;
    private final AtomicBoolean dead = new AtomicBoolean();
    private final java.util.concurrent.CompletableFuture<String> ended = new java.util.concurrent.CompletableFuture<>();
    private volatile String killedBecause;
    private FrameChannel channel;
    private HeartbeatMonitor heartbeat;
    private long weightBytes;
    private BackendCapabilities capabilities;

    private WorkerProcess(String name, Process process, Path socketDir) {
        this.name = name;
        this.process = process;
        this.socketDir = socketDir;
        relay(process.getInputStream(), "out", false);
        this.stderrPump = relay(process.getErrorStream(), "err", true);
    }

    /**
     * Starts the worker and waits until it has loaded the model and said hello; from then on it beats every
     * {@code heartbeat}.
     *
     * @throws IllegalStateException with the exit code and the last lines of its stderr when it exits or does not
     *                               become ready within {@code timeout}
     */
    static WorkerProcess start(WorkerLaunch launch, Duration timeout, Duration heartbeat) {
        Path dir;
        Process process;
        try {
            dir = Files.createTempDirectory("strata-" + launch.name() + "-");
            process = new ProcessBuilder(launch.command(dir.resolve("worker.sock"), heartbeat)).start();
            process.getOutputStream().close();
        } catch (IOException e) {
            throw new IllegalStateException(launch.name() + " could not be started: " + e.getMessage(), e);
        }
        WorkerProcess w = new WorkerProcess(launch.name(), process, dir);
        try {
            w.connect(dir.resolve("worker.sock"), System.nanoTime() + timeout.toNanos(), timeout);
            return w;
        } catch (RuntimeException e) {
            w.close();
            throw e;
        }
    }

    private void connect(Path socket, long deadline, Duration timeout) {
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " did not start: " + describeEnd());
            }
            if (Files.exists(socket)) {
                try {
                    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                    try {
                        ch.connect(UnixDomainSocketAddress.of(socket));
                    } catch (IOException e) {
                        ch.close();
                        throw e;
                    }
                    channel = new FrameChannel(ch);
                    SocketChannel beats = SocketChannel.open(StandardProtocolFamily.UNIX);
                    FrameChannel beatChannel = new FrameChannel(beats);
                    try {
                        beats.connect(UnixDomainSocketAddress.of(socket));
                    } catch (IOException e) {
                        beatChannel.close();
                        throw e;
                    }
                    FrameChannel.Frame hello;
                    try {
                        hello = channel.receive();
                    } catch (IOException e) {
                        beatChannel.close();
                        throw e;
                    }
                    weightBytes = hello.body().getLong();
                    capabilities = WorkerProtocol.capabilities(hello.body());
                    heartbeat = HeartbeatMonitor.start(name, beatChannel);
                    return;
                } catch (IOException e) {
                    if (channel != null) {
                        throw new IllegalStateException(name + " did not start: " + describeEnd(), e);
                    }
                    // bound but not yet accepting: try again
                }
            }
            if (System.nanoTime() > deadline) {
                kill("not ready within " + timeout.toSeconds() + " s (strata.engine.worker-start-timeout)");
                throw new IllegalStateException(name + " did not start: " + describeEnd());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                kill("start-up interrupted");
                throw new IllegalStateException(name + " start-up interrupted", e);
            }
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    FrameChannel channel() {
        return channel;
    }

    HeartbeatMonitor heartbeat() {
        return heartbeat;
    }

    long weightBytes() {
        return weightBytes;
    }

    BackendCapabilities capabilities() {
        return capabilities;
    }

    Process process() {
        return process;
    }

    /** True once, for the first caller that notices this worker is gone. */
    boolean markDead() {
        return dead.compareAndSet(false, true);
    }

    /** Completed with the crash description by whoever noticed the death first. */
    java.util.concurrent.CompletableFuture<String> ended() {
        return ended;
    }

    boolean dead() {
        return dead.get();
    }

    /** Whether the platform killed this worker ({@link #kill}). */
    boolean killed() {
        return killedBecause != null;
    }

    /** Kills the worker, remembering why (a hung step, no heartbeat, a failed start-up), for {@link #describeEnd()}. */
    void kill(String why) {
        killedBecause = why;
        process.destroyForcibly();
    }

    /**
     * How the worker ended: its exit code (waiting a few seconds for it), why the platform killed it if it did,
     * and the last lines it wrote to stderr.
     */
    String describeEnd() {
        StringBuilder s = new StringBuilder();
        try {
            if (process.waitFor(5, TimeUnit.SECONDS)) {
                s.append("exited with code ").append(process.exitValue());
            } else {
                s.append("stopped answering (still running, pid ").append(process.pid()).append(")");
            }
            stderrPump.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            s.append("state unknown (interrupted)");
        }
        if (killedBecause != null) {
            s.append(", killed by the platform: ").append(killedBecause);
        }
        String tail;
        synchronized (stderrTail) {
            tail = String.join(" | ", stderrTail);
        }
        if (!tail.isEmpty()) {
            s.append("; last stderr: ").append(tail);
        }
        return s.toString();
    }

    private Thread relay(InputStream in, String stream, boolean keepTail) {
        return Thread.ofPlatform().daemon().name("strata-" + name + "-" + stream).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    log.info("[{}] {}", name, line);
                    // the JVM's notice about the incubating vector API is on every worker's stderr: not a clue
                    if (keepTail && !line.isBlank() && !line.startsWith("WARNING: Using incubator modules")) {
                        synchronized (stderrTail) {
                            if (stderrTail.size() == TAIL_LINES) {
                                stderrTail.removeFirst();
                            }
                            stderrTail.addLast(line.strip());
                        }
                    }
                }
            } catch (IOException e) {
                // the process went away with its pipes
            }
        });
    }

    /** Closes the channels, kills the process if it still runs, removes the socket folder. */
    @Override
    public void close() {
        if (channel != null) {
            channel.close();
        }
        if (heartbeat != null) {
            heartbeat.close();
        }
        if (process.isAlive()) {
            process.destroyForcibly();
        }
        try {
            Files.deleteIfExists(socketDir.resolve("worker.sock"));
            Files.deleteIfExists(socketDir);
        } catch (IOException e) {
            log.debug("Could not remove {}", socketDir, e);
        }
    }
}
