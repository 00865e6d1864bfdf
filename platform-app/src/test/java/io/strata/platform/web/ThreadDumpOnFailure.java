package io.strata.platform.web;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Instant;

/**
 * Prints every thread of this JVM (the test and the server it started) when a browser test fails.
 * A browser test that times out says only that the page did not answer; the server's threads at that
 * moment say whether it was blocked, and on what.
 */
public final class ThreadDumpOnFailure implements TestExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        StringBuilder out = new StringBuilder("==> threads at the failure of ").append(context.getDisplayName())
                .append(" (").append(Instant.now()).append(")\n");
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true, 64)) {
            out.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                out.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                out.append(" held by \"").append(t.getLockOwnerName()).append('"');
            }
            out.append('\n');
            // ThreadInfo.toString() cuts a stack at 8 frames, too few to see who called into a lock
            for (StackTraceElement frame : t.getStackTrace()) {
                out.append("\tat ").append(frame).append('\n');
            }
        }
        System.err.print(out);
        throw failure;
    }
}
