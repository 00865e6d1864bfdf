package io.strata.platform.web;

import io.netty.buffer.PooledByteBufAllocator;
import io.strata.platform.NettyLeakCheck;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.MediaType;
import org.thymeleaf.context.Context;
import org.thymeleaf.spring6.SpringWebFluxTemplateEngine;
import org.thymeleaf.templatemode.TemplateMode;
import org.thymeleaf.templateresolver.StringTemplateResolver;
import reactor.core.publisher.Flux;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A page whose template fails part-way must not leak the pooled buffer it was being rendered into
 * (Thymeleaf's own engine does: the "LEAK: ByteBuf.release() was not called" of the console tests).
 */
class BufferSafeTemplateEngineTest {
    static final String BROKEN = "<html><body><p>" + "padding ".repeat(200) + "</p><p th:text=\"${plugin.probe.devices}\">x</p></body></html>";

    private static List<String> leaksOfAFailedRender(SpringWebFluxTemplateEngine engine) throws InterruptedException {
        StringTemplateResolver resolver = new StringTemplateResolver();
        resolver.setTemplateMode(TemplateMode.HTML);
        engine.setTemplateResolver(resolver);
        NettyLeakCheck.collect();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> Flux.from(engine.processStream(BROKEN, null, new Context(),
                    new NettyDataBufferFactory(PooledByteBufAllocator.DEFAULT), MediaType.TEXT_HTML, StandardCharsets.UTF_8)).blockLast())
                    .hasMessageContaining("plugin.probe.devices");
        }
        return NettyLeakCheck.collect();
    }

    @Test
    void aFailedRenderReleasesItsBuffer() throws InterruptedException {
        assertThat(leaksOfAFailedRender(new BufferSafeTemplateEngine())).isEmpty();
    }

    @Test
    void thymeleafsOwnEngineLeaksThere() throws InterruptedException {
        // the control: the same render with the stock engine is reported, so the test above can fail
        assertThat(leaksOfAFailedRender(new SpringWebFluxTemplateEngine())).isNotEmpty()
                .allSatisfy(leak -> assertThat(leak).contains("SpringWebFluxTemplateEngine"));
    }
}
