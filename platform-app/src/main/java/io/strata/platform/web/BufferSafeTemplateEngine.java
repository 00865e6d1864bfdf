package io.strata.platform.web;

import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.thymeleaf.context.IContext;
import org.thymeleaf.spring6.SpringWebFluxTemplateEngine;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Thymeleaf's reactive engine renders a page into a pooled Netty buffer and, when the template fails
 * part-way, reports the error without releasing that buffer: one leaked buffer per failed page view, which
 * a long-running server never gets back. This engine hands Thymeleaf a factory that remembers what it
 * allocated and releases whatever was not passed on when the render fails or is cancelled.
 */
public class BufferSafeTemplateEngine extends SpringWebFluxTemplateEngine {

    @Override
    public Publisher<DataBuffer> processStream(String template, Set<String> markupSelectors, IContext context,
                                               DataBufferFactory bufferFactory, MediaType mediaType, Charset charset,
                                               int responseMaxChunkSizeBytes) {
        TrackingFactory tracking = new TrackingFactory(bufferFactory);
        Publisher<DataBuffer> stream = super.processStream(template, markupSelectors, context, tracking, mediaType, charset,
                responseMaxChunkSizeBytes);
        if (stream instanceof Mono<DataBuffer> mono) {
            return mono.doOnNext(tracking::passedOn).doOnError(e -> tracking.releaseKept()).doOnCancel(tracking::releaseKept);
        }
        return Flux.from(stream).doOnNext(tracking::passedOn).doOnError(e -> tracking.releaseKept()).doOnCancel(tracking::releaseKept);
    }

    /** Delegates to the response's factory and keeps the buffers it allocated until they are passed on. */
    static final class TrackingFactory implements DataBufferFactory {
        private final DataBufferFactory delegate;
        private final Set<DataBuffer> kept = Collections.newSetFromMap(new IdentityHashMap<>());

        TrackingFactory(DataBufferFactory delegate) {
            this.delegate = delegate;
        }

        private DataBuffer keep(DataBuffer buffer) {
            synchronized (kept) {
                kept.add(buffer);
            }
            return buffer;
        }

        void passedOn(DataBuffer buffer) {
            synchronized (kept) {
                kept.remove(buffer);
            }
        }

        void releaseKept() {
            List<DataBuffer> left;
            synchronized (kept) {
                left = new ArrayList<>(kept);
                kept.clear();
            }
            left.forEach(DataBufferUtils::release);
        }

        @Override
        @Deprecated
        @SuppressWarnings("deprecation")
        public DataBuffer allocateBuffer() {
            return keep(delegate.allocateBuffer());
        }

        @Override
        public DataBuffer allocateBuffer(int initialCapacity) {
            return keep(delegate.allocateBuffer(initialCapacity));
        }

        @Override
        public DataBuffer wrap(ByteBuffer byteBuffer) {
            return delegate.wrap(byteBuffer);
        }

        @Override
        public DataBuffer wrap(byte[] bytes) {
            return delegate.wrap(bytes);
        }

        @Override
        public DataBuffer join(List<? extends DataBuffer> dataBuffers) {
            return delegate.join(dataBuffers);
        }

        @Override
        public boolean isDirect() {
            return delegate.isDirect();
        }
    }
}
