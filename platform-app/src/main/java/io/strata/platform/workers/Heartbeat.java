package io.strata.platform.workers;

import java.io.IOException;
import java.time.Duration;

/**
 * The worker's side of the heartbeat: a thread of its own that sends a {@link WorkerProtocol#HEARTBEAT} frame on
 * the heartbeat connection every {@code interval}, however long the step on the control connection takes. It
 * stops when the connection fails (the platform went away or closed it); the worker's exit ends it otherwise.
 */
final class Heartbeat {

    private Heartbeat() {
    }

    /** Starts beating on {@code channel} (a daemon thread, so it never keeps the worker alive). */
    static Thread start(FrameChannel channel, Duration interval) {
        Thread t = Thread.ofPlatform().daemon().name("strata-worker-heartbeat").unstarted(() -> beat(channel, interval));
        // a beat is a few bytes every interval; it should not queue behind the backend's compute threads
        t.setPriority(Thread.MAX_PRIORITY);
        t.start();
        return t;
    }

    private static void beat(FrameChannel channel, Duration interval) {
        long beat = 0;
        try {
            while (true) {
                channel.send(WorkerProtocol.HEARTBEAT, new Payload().putLong(beat++).done());
                Thread.sleep(interval);
            }
        } catch (IOException | InterruptedException e) {
            // the platform closed the connection or went away: nobody is listening any more
        }
    }
}
