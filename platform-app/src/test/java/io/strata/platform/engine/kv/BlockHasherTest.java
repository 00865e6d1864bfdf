package io.strata.platform.engine.kv;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class BlockHasherTest {

    /** The chain's definition, written out with a fresh digest and byte buffer. */
    static BlockHash expected(BlockHash prev, int[] tokens, int from, int count) throws Exception {
        ByteBuffer in = ByteBuffer.allocate(32 + 4 * count).order(ByteOrder.LITTLE_ENDIAN);
        in.putLong(prev.a()).putLong(prev.b()).putLong(prev.c()).putLong(prev.d());
        for (int i = 0; i < count; i++) {
            in.putInt(tokens[from + i]);
        }
        ByteBuffer out = ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(in.array()));
        return new BlockHash(out.getLong(), out.getLong(), out.getLong(), out.getLong());
    }

    @Test
    void reusedHasherFollowsTheChainDefinition() throws Exception {
        int[] tokens = IntStream.range(0, 1000).map(i -> i * 7919 % 129_280).toArray();
        BlockHasher hasher = new BlockHasher();
        BlockHash want = BlockHash.seed("flash", "tenant");
        BlockHash got = want;
        for (int block = 0; block < 3; block++) {
            want = expected(want, tokens, block * 256, 256);
            got = hasher.next(got, tokens, block * 256, 256);
            assertThat(got).isEqualTo(want);
        }
        // a short block (shorter input than the buffer) after full ones must not see stale bytes
        assertThat(hasher.next(got, tokens, 900, 100)).isEqualTo(expected(want, tokens, 900, 100));
        assertThat(got.next(tokens, 900, 100)).isEqualTo(expected(want, tokens, 900, 100));
        assertThat(hasher.next(got, tokens, 900, 100)).isNotEqualTo(hasher.next(got, tokens, 901, 99));
    }
}
