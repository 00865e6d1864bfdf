package io.strata.platform.keys;

import org.springframework.stereotype.Component;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-key token buckets: capacity = the key's per-minute limit, refilled continuously at limit/60 per
 * second, so short bursts up to the limit pass and a steady rate above it is refused.
 */
@Component
public class RateLimiter {
    private final Map<Long, Bucket> buckets = new ConcurrentHashMap<>();

    /** @return 0 if the request may pass, else seconds until one token is back (for Retry-After) */
    public long tryAcquire(long keyId, int perMinute) {
        Bucket b = buckets.compute(keyId, (id, old) -> old == null || old.capacity != perMinute ? new Bucket(perMinute) : old);
        return b.take();
    }

    private static final class Bucket {
        final int capacity;
        double tokens;
        long lastNanos = System.nanoTime();

        Bucket(int capacity) {
            this.capacity = capacity;
            this.tokens = capacity;
        }

        synchronized long take() {
            long now = System.nanoTime();
            tokens = Math.min(capacity, tokens + (now - lastNanos) / 1e9 * capacity / 60.0);
            lastNanos = now;
            if (tokens >= 1) {
                tokens -= 1;
                return 0;
            }
            return (long) Math.ceil((1 - tokens) * 60.0 / capacity);
        }
    }
}
