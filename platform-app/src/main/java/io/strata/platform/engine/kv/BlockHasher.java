package io.strata.platform.engine.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.MessageDigest;

/**
 * Computes {@link BlockHash#next} with one digest and one buffer, reused: the manager hashes a block per
 * request every 256 positions, and looking a digest up and allocating its input each time cost more than
 * the SHA-256 itself. Not thread-safe, like the manager that owns it.
 */
final class BlockHasher {

    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final MessageDigest sha = BlockHash.sha256();
    private byte[] input = new byte[32 + 4 * io.strata.kv.KvLayout.BLOCK_POSITIONS];
    private final byte[] digest = new byte[32];

    /** The hash of {@code count} tokens from {@code from}, chained to {@code prev}. */
    BlockHash next(BlockHash prev, int[] tokens, int from, int count) {
        int n = 32 + 4 * count;
        if (input.length < n) {
            input = new byte[n];
        }
        LONG_LE.set(input, 0, prev.a());
        LONG_LE.set(input, 8, prev.b());
        LONG_LE.set(input, 16, prev.c());
        LONG_LE.set(input, 24, prev.d());
        for (int i = 0; i < count; i++) {
            INT_LE.set(input, 32 + 4 * i, tokens[from + i]);
        }
        sha.update(input, 0, n);
        try {
            sha.digest(digest, 0, digest.length);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException("SHA-256 digest", e);
        }
        return new BlockHash((long) LONG_BE.get(digest, 0), (long) LONG_BE.get(digest, 8),
                (long) LONG_BE.get(digest, 16), (long) LONG_BE.get(digest, 24));
    }
}
