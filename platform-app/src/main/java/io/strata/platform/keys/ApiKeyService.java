package io.strata.platform.keys;

import org.springframework.stereotype.Service;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Creates, lists, revokes and verifies API keys. A key is {@code sk-} + 32 random base64url characters
 * (192 bits), so a plain SHA-256 is a sufficient hash (no password stretching needed); the secret is
 * shown once at creation and never stored. Verification looks candidates up by the public prefix and
 * compares hashes in constant time.
 */
@Service
public class ApiKeyService {
    static final int PREFIX_LENGTH = 12;
    private static final Duration TOUCH_INTERVAL = Duration.ofMinutes(1);

    private final ApiKeyRepository repository;
    private final SecureRandom random = new SecureRandom();
    private final Map<Long, Instant> lastTouched = new ConcurrentHashMap<>();

    public ApiKeyService(ApiKeyRepository repository) {
        this.repository = repository;
    }

    /** A new key; {@code secret} is only ever available here. */
    public record CreatedKey(ApiKey key, String secret) {
    }

    public CreatedKey create(String name, Integer rateLimitPerMinute) {
        if (name == null || name.isBlank() || name.length() > 200) {
            throw new IllegalArgumentException("name must be 1 to 200 characters");
        }
        if (rateLimitPerMinute != null && rateLimitPerMinute <= 0) {
            throw new IllegalArgumentException("rate_limit_per_minute must be a positive integer or null");
        }
        byte[] raw = new byte[24];
        random.nextBytes(raw);
        String secret = "sk-" + Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        long id = repository.insert(name.trim(), secret.substring(0, PREFIX_LENGTH), hash(secret), rateLimitPerMinute);
        return new CreatedKey(repository.byId(id).orElseThrow(), secret);
    }

    public List<ApiKey> list() {
        return repository.all();
    }

    public boolean revoke(long id) {
        return repository.revoke(id);
    }

    /** The active key this secret belongs to, if any. Blocking (JDBC). */
    public Optional<ApiKey> verify(String presented) {
        if (presented == null || presented.length() < PREFIX_LENGTH || presented.length() > 200) {
            return Optional.empty();
        }
        byte[] presentedHash = hash(presented).getBytes(StandardCharsets.US_ASCII);
        ApiKey match = null;
        for (ApiKey candidate : repository.activeByPrefix(presented.substring(0, PREFIX_LENGTH))) {
            if (MessageDigest.isEqual(presentedHash, candidate.hash().getBytes(StandardCharsets.US_ASCII))) {
                match = candidate;
            }
        }
        if (match != null) {
            touch(match.id());
        }
        return Optional.ofNullable(match);
    }

    private void touch(long id) {
        Instant now = Instant.now();
        Instant last = lastTouched.get(id);
        if (last == null || last.plus(TOUCH_INTERVAL).isBefore(now)) {
            lastTouched.put(id, now);
            repository.touch(id, now);
        }
    }

    static String hash(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
