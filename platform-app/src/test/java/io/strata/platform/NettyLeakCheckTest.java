package io.strata.platform;

import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The leak check itself: a buffer dropped without release() is reported, so the check can fail a class. */
class NettyLeakCheckTest {

    @Test
    void aDroppedBufferIsReported() throws InterruptedException {
        assertThat(System.getProperty("io.netty.leakDetection.level")).as("surefire runs the tests with paranoid leak detection")
                .isEqualToIgnoringCase("paranoid");
        NettyLeakCheck.collect();
        leakOne();
        assertThat(NettyLeakCheck.collect()).singleElement().asString()
                .startsWith("LEAK: ByteBuf.release() was not called").contains("leakOne");
    }

    private static void leakOne() {
        PooledByteBufAllocator.DEFAULT.buffer(64).writeLong(42);
    }
}
