package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * Sizes the codecs' in-memory limit (Spring's default is 256 KiB) by {@link RequestSizeLimit}, so a
 * prompt as long as the served model's context can be read, and a larger body is refused while it is
 * read (413, see {@link ApiErrors}).
 */
@Configuration
public class RequestSizeConfiguration {
    private static final Logger log = LoggerFactory.getLogger(RequestSizeConfiguration.class);

    @Bean
    RequestSizeLimit requestSizeLimit(ApiProperties props, InferenceEngine engine) {
        RequestSizeLimit limit = RequestSizeLimit.of(props.maxRequestSize(), engine.model().maxModelLen());
        log.info("Request bodies up to {} ({})", RequestSizeLimit.human(limit.bytes()), limit.derivedBy());
        return limit;
    }

    @Bean
    WebFluxConfigurer requestSizeCodecs(RequestSizeLimit limit) {
        return new WebFluxConfigurer() {
            @Override
            public void configureHttpMessageCodecs(ServerCodecConfigurer codecs) {
                codecs.defaultCodecs().maxInMemorySize(limit.bytes());
            }
        };
    }
}
