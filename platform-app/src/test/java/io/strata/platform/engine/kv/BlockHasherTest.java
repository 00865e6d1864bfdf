package io.strata.platform.engine.kv;

import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class BlockHasherTest {

    @Test
    void reusedHasherGivesTheSameChainAsFreshDigests() {
        int[] tokens = IntStream.range(0, 1000).map(i -> i * 7919 % 129_280).toArray();
        BlockHasher hasher = new BlockHasher();
        BlockHash fresh = BlockHash.seed("flash", "tenant");
        BlockHash reused = fresh;
        for (int block = 0; block < 3; block++) {
            fresh = fresh.next(tokens, block * 256, 256);
            reused = hasher.next(reused, tokens, block * 256, 256);
            assertThat(reused).isEqualTo(fresh);
        }
        // a short block (shorter input than the buffer) after full ones must not see stale bytes
        assertThat(hasher.next(reused, tokens, 900, 100)).isEqualTo(fresh.next(tokens, 900, 100));
        assertThat(hasher.next(reused, tokens, 900, 100)).isNotEqualTo(hasher.next(reused, tokens, 901, 99));
    }
}
