package io.strata.platform;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * Fails a test class when Netty reports a leaked buffer during or before it. Registered for every test
 * class (META-INF/services, autodetection on in junit-platform.properties); the surefire configuration
 * runs the tests with {@code io.netty.leakDetection.level=paranoid}, so every buffer is tracked. A leak is
 * only noticed once the buffer has been garbage-collected, so after each class this forces a collection
 * and allocates a few buffers, which makes the detector look at what was collected.
 *
 * <p>A buffer leaked per request or per console stream would exhaust a long-running server's direct
 * memory; this turns Netty's log line into a failing test. Leaks of the tests' own HTTP client (buffers
 * its response decoder read) are left to Netty's log: they are not the server's.
 */
public final class NettyLeakCheck implements AfterAllCallback {
    private static final List<String> LEAKS = new ArrayList<>();
    /** Netty's HTTP client decoder: a buffer it read belongs to a test's HTTP client, not to the server. */
    private static final String TEST_CLIENT_CODEC = "io.netty.handler.codec.http.HttpClientCodec$Decoder";

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
                return new Recording<>(resource, samplingInterval);
            }
        });
        verifyInstalled();
    }

    /** Netty's buffer detector is created once, when its class loads; if that happened first, say so. */
    private static void verifyInstalled() {
        try {
            Field f = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            f.setAccessible(true);
            if (!(f.get(null) instanceof Recording<?>)) {
                throw new IllegalStateException("Netty's buffer leak detector was created before NettyLeakCheck could record it");
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot check Netty's buffer leak detector", e);
        }
    }

    /** Classes that leaked, with the report: surefire reruns a failed class, and a rerun must not pass it. */
    private static final java.util.Map<String, String> LEAKED = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        List<String> leaks = collect();
        String testClass = context.getRequiredTestClass().getName();
        if (!leaks.isEmpty()) {
            LEAKED.put(testClass, leaks.size() + " Netty buffer leak(s) reported by the end of " + context.getDisplayName()
                    + " (io.netty.leakDetection.level=paranoid):\n" + String.join("\n\n", leaks));
        }
        String report = LEAKED.get(testClass);
        if (report != null) {
            throw new AssertionError(leaks.isEmpty() ? report + "\n(reported in an earlier run of this class)" : report);
        }
    }

    /** Makes collected leaked buffers show up, then returns (and forgets) the reports so far. */
    public static List<String> collect() throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(20);
            for (int i = 0; i < 32; i++) {
                ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(8);
                probe.release();
            }
        }
        synchronized (LEAKS) {
            List<String> out = List.copyOf(LEAKS);
            LEAKS.clear();
            return out;
        }
    }

    private static final class Recording<T> extends ResourceLeakDetector<T> {
        Recording(Class<?> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            if (records.contains(TEST_CLIENT_CODEC)) {
                // a response buffer of the tests' own Reactor Netty client (WebTestClient), seen when the server
                // answers before the client finished sending (413) or a test cancels a stream: not the server's
                super.reportTracedLeak(resourceType, records);
                return;
            }
            synchronized (LEAKS) {
                LEAKS.add("LEAK: " + resourceType + ".release() was not called" + records);
            }
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            synchronized (LEAKS) {
                LEAKS.add("LEAK: " + resourceType + ".release() was not called (untraced)");
            }
            super.reportUntracedLeak(resourceType);
        }
    }
}
