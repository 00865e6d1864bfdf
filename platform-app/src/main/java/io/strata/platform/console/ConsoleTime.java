package io.strata.platform.console;

import org.springframework.stereotype.Component;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * How the console writes a moment: UTC, {@code 2026-12-01 15:04:05 UTC}, on every page (templates reach it as
 * {@code @consoleTime}); the charts' JavaScript writes its clock the same way.
 */
@Component("consoleTime")
public class ConsoleTime {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

    /** Date and time; "never" when there is no moment. */
    public String format(Instant t) {
        return t == null ? "never" : time(t);
    }

    static String time(Instant t) {
        return TIME.format(t);
    }

    static String day(Instant t) {
        return DAY.format(t);
    }

    static String clock(Instant t) {
        return CLOCK.format(t);
    }
}
