package io.strata.platform.workers;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sliding window of restarts, driven by given instants (no clock, no sleeps). */
class RestartWindowTest {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void moreRestartsThanTheMaximumWithinTheWindowExceedIt() {
        RestartWindow w = RestartWindow.of(3, Duration.ofSeconds(60));
        assertThat(w.count()).isZero();
        assertThat(w.exceeded()).isFalse();
        w = w.record(T0).record(T0.plusSeconds(10)).record(T0.plusSeconds(20));
        assertThat(w.count()).isEqualTo(3);
        assertThat(w.exceeded()).as("three restarts are allowed").isFalse();
        w = w.record(T0.plusSeconds(30));
        assertThat(w.count()).isEqualTo(4);
        assertThat(w.exceeded()).isTrue();
    }

    @Test
    void restartsOlderThanTheWindowNoLongerCount() {
        RestartWindow w = RestartWindow.of(2, Duration.ofSeconds(60))
                .record(T0).record(T0.plusSeconds(30));
        // exactly one window after the first restart: the first has fallen out
        RestartWindow later = w.record(T0.plusSeconds(60));
        assertThat(later.count()).isEqualTo(2);
        assertThat(later.restarts()).containsExactly(T0.plusSeconds(30), T0.plusSeconds(60));
        assertThat(later.exceeded()).isFalse();
        // a restart a little earlier still sees all three inside the window
        assertThat(w.record(T0.plusSeconds(59)).exceeded()).isTrue();
        // a worker that crashes once every few minutes is restarted forever
        RestartWindow slow = RestartWindow.of(2, Duration.ofSeconds(60));
        for (int i = 0; i < 50; i++) {
            slow = slow.record(T0.plus(Duration.ofMinutes(2L * i)));
            assertThat(slow.exceeded()).isFalse();
            assertThat(slow.count()).isEqualTo(1);
        }
    }

    @Test
    void isAValueAndValidatesItsLimits() {
        RestartWindow a = RestartWindow.of(1, Duration.ofSeconds(5));
        RestartWindow b = a.record(T0);
        assertThat(a.count()).as("recording returns a new window").isZero();
        assertThat(b).isEqualTo(RestartWindow.of(1, Duration.ofSeconds(5)).record(T0));
        assertThat(RestartWindow.of(0, Duration.ofSeconds(5)).record(T0).exceeded())
                .as("max 0: no restart at all").isTrue();
        assertThatThrownBy(() -> RestartWindow.of(-1, Duration.ofSeconds(5))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RestartWindow.of(1, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
