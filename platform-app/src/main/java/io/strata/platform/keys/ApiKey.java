package io.strata.platform.keys;

import java.time.Instant;

/**
 * An API key as stored: never the secret, only its hash and a display prefix.
 *
 * @param rateLimitPerMinute null = no per-key limit
 */
public record ApiKey(long id, String name, String prefix, String hash, Integer rateLimitPerMinute,
                     Instant createdAt, Instant revokedAt, Instant lastUsedAt) {
    public boolean revoked() {
        return revokedAt != null;
    }
}
