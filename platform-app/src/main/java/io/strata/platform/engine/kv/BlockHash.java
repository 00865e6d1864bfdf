package io.strata.platform.engine.kv;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SHA-256 of one 256-position block, chained: {@code h_i = SHA256(h_{i-1} || tokens_i)} with
 * {@code h_{-1} = SHA256("strata-kv" || modelId || cacheSalt)}. The chain makes a block's hash name its
 * whole prefix; the seed keeps models apart and lets tenants with different salts never share (or
 * probe) each other's pages.
 */
public record BlockHash(long a, long b, long c, long d) {

    /** The chain seed for a model and an optional salt ({@code null} or empty means unsalted). */
    public static BlockHash seed(String modelId, String cacheSalt) {
        MessageDigest md = sha256();
        md.update("strata-kv\u0000".getBytes(StandardCharsets.UTF_8));
        md.update(modelId.getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
        if (cacheSalt != null && !cacheSalt.isEmpty()) {
            md.update((byte) 1);
            md.update(cacheSalt.getBytes(StandardCharsets.UTF_8));
        }
        return of(md.digest());
    }

    /**
     * The hash of {@code count} tokens starting at {@code from}, chained to this hash: SHA-256 over this
     * hash's four longs and then the tokens, all little-endian. The manager uses a reused {@link BlockHasher}.
     */
    public BlockHash next(int[] tokens, int from, int count) {
        return new BlockHasher().next(this, tokens, from, count);
    }

    private static BlockHash of(byte[] digest) {
        ByteBuffer bb = ByteBuffer.wrap(digest);
        return new BlockHash(bb.getLong(), bb.getLong(), bb.getLong(), bb.getLong());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    @Override
    public String toString() {
        return String.format("%016x%016x…", a, b);
    }
}
