package io.strata.platform.admin;

import io.strata.platform.config.PluginProperties;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Mono;

import java.net.URI;

/**
 * Turns "upload too large" into a message on the Plugins page. An upload whose Content-Length already
 * says it is too large is refused without being parsed: its body is read and dropped (up to
 * {@link #DRAIN_LIMIT_BYTES}; larger ones are not read at all), so the browser, which is still sending,
 * receives the answer instead of a reset connection, and no multipart parser reports the limit (that
 * left Reactor's 60-line "onErrorDropped" ERROR in the log). The multipart size limit trips while
 * the body is parsed, and the first to parse it is the CSRF filter (it reads the form's token), so
 * the error happens before any controller could handle it; this filter sits in front of security.
 */
@Component
public class UploadLimitFilter implements WebFilter, Ordered {
    static final String UPLOAD_PATH = "/admin/plugins/upload";
    /** Room for the multipart framing and the CSRF field around the jar itself. */
    static final long FORM_OVERHEAD_BYTES = 64 * 1024;
    /** Larger refused uploads are not read at all: the connection closes under them. */
    static final long DRAIN_LIMIT_BYTES = 64L * 1024 * 1024;

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(UploadLimitFilter.class);

    private final PluginProperties properties;

    public UploadLimitFilter(PluginProperties properties) {
        this.properties = properties;
    }

    @Override
    public int getOrder() {
        // before Spring Security's WebFilterChainProxy (-100)
        return -200;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!UPLOAD_PATH.equals(exchange.getRequest().getPath().pathWithinApplication().value())) {
            return chain.filter(exchange);
        }
        // A refused or partly read upload can leave the connection in a state Chromium stalls on
        // (seen in the browser tests); a fresh connection for the next request avoids it.
        exchange.getResponse().beforeCommit(() -> {
            exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
            return Mono.empty();
        });
        long declared = exchange.getRequest().getHeaders().getContentLength();
        if (declared > properties.maxUploadSize().toBytes() + FORM_OVERHEAD_BYTES) {
            log.info("Plugin upload refused: {} bytes declared, limit {} (strata.plugins.max-upload-size)", declared,
                    properties.maxUploadSize().toBytes());
            // A browser still sending the body when the answer comes and the connection closes shows a
            // connection error instead of the answer: read and drop the body first (no parsing), up to a cap
            if (declared > DRAIN_LIMIT_BYTES) {
                return refuse(exchange);
            }
            return exchange.getRequest().getBody().doOnNext(DataBufferUtils::release).then(refuse(exchange));
        }
        return chain.filter(exchange).onErrorResume(DataBufferLimitException.class, e -> {
            if (exchange.getResponse().isCommitted()) {
                return Mono.error(e);
            }
            log.info("Plugin upload refused while received: {}", e.getMessage());
            return refuse(exchange);
        });
    }

    private Mono<Void> refuse(ServerWebExchange exchange) {
        String message = "Rejected: the jar is larger than " + properties.maxUploadSize().toMegabytes()
                + " MB (strata.plugins.max-upload-size)";
        exchange.getResponse().setStatusCode(HttpStatus.SEE_OTHER);
        exchange.getResponse().getHeaders().setLocation(URI.create(UriComponentsBuilder.fromPath("/admin/plugins")
                .queryParam("error", message).encode().build().toUriString()));
        return exchange.getResponse().setComplete();
    }
}
