package io.strata.platform.workers;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two ends of the heartbeat over a real Unix-domain socket: while the worker's side beats, the platform's
 * side sees a silence shorter than a few intervals; once the beats stop (the worker's end closed), the silence
 * grows. And the property's bounds.
 */
class HeartbeatTest {

    @Test
    void theSilenceStaysShortWhileBeatsComeAndGrowsOnceTheyStop(@TempDir Path dir) throws Exception {
        Path socket = dir.resolve("beat.sock");
        Duration interval = Duration.ofMillis(50);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            SocketChannel platformEnd = SocketChannel.open(StandardProtocolFamily.UNIX);
            platformEnd.connect(UnixDomainSocketAddress.of(socket));
            FrameChannel workerEnd = new FrameChannel(server.accept());
            try (HeartbeatMonitor monitor = HeartbeatMonitor.start("worker-test", new FrameChannel(platformEnd))) {
                Thread beating = Heartbeat.start(workerEnd, interval);
                for (int i = 0; i < 20; i++) {
                    Thread.sleep(50);
                    assertThat(monitor.silence()).as("while beating").isLessThan(Duration.ofMillis(500));
                }
                workerEnd.close();
                beating.join(2000);
                assertThat(beating.isAlive()).as("the beating thread ends with its connection").isFalse();
                Thread.sleep(600);
                assertThat(monitor.silence()).as("after the beats stopped").isGreaterThanOrEqualTo(Duration.ofMillis(600));
            }
        }
    }

    @Test
    void theTimeoutDefaultsToFiveSecondsBeatsFourTimesWithinItAndMustBeAtLeast200ms() {
        WorkerProperties defaults = WorkerProperties.off();
        assertThat(defaults.workerHeartbeatTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(defaults.workerHeartbeatInterval()).isEqualTo(Duration.ofMillis(1250));
        assertThat(new WorkerProperties(true, null, null, Duration.ofSeconds(2), null, null, null).workerHeartbeatInterval())
                .isEqualTo(Duration.ofMillis(500));
        assertThatThrownBy(() -> new WorkerProperties(true, null, null, Duration.ofMillis(100), null, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("worker-heartbeat-timeout");
        assertThatThrownBy(() -> new WorkerProperties(true, null, null, Duration.ZERO, null, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("worker-heartbeat-timeout");
    }
}
