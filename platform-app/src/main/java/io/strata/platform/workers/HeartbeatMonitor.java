package io.strata.platform.workers;

import java.io.IOException;
import java.time.Duration;

/**
 * The platform's side of one worker's heartbeat: reads the beats on a thread of its own and remembers when the
 * last one came. {@link #silence()} is how long the worker has been quiet; the supervisor kills a worker whose
 * silence outlasts {@code strata.engine.worker-heartbeat-timeout}. A worker that closed its heartbeat connection
 * but lives on is silent from then on, and so is treated as hung.
 */
final class HeartbeatMonitor implements AutoCloseable {
    private final FrameChannel channel;
    private volatile long lastBeatNanos = System.nanoTime();

    private HeartbeatMonitor(FrameChannel channel) {
        this.channel = channel;
    }

    /** Starts reading {@code channel}'s beats; the worker counts as having just beaten. */
    static HeartbeatMonitor start(String worker, FrameChannel channel) {
        HeartbeatMonitor m = new HeartbeatMonitor(channel);
        Thread.ofPlatform().daemon().name("strata-" + worker + "-heartbeat").start(m::read);
        return m;
    }

    private void read() {
        try {
            while (true) {
                FrameChannel.Frame f = channel.receive();
                if (f.type() == WorkerProtocol.HEARTBEAT) {
                    lastBeatNanos = System.nanoTime();
                }
            }
        } catch (IOException e) {
            // the worker ended or the platform closed the connection; the silence grows from here
        }
    }

    /** Time since the last beat (or since the worker started, before its first one). */
    Duration silence() {
        return Duration.ofNanos(System.nanoTime() - lastBeatNanos);
    }

    @Override
    public void close() {
        channel.close();
    }
}
