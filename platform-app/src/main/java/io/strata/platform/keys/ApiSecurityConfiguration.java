package io.strata.platform.keys;

import io.strata.platform.api.ApiProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import tools.jackson.databind.ObjectMapper;

/**
 * The security chain of the model API: {@code /v1/**}, {@code /tokenize}, {@code /detokenize} (API key
 * unless {@code strata.api.auth=none}) and the open {@code /health}, {@code /version}. It is ordered
 * before the console's chain, is stateless, and has CSRF off (bearer keys, no cookies).
 */
@Configuration
public class ApiSecurityConfiguration {
    private static final Logger log = LoggerFactory.getLogger(ApiSecurityConfiguration.class);

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 10)
    SecurityWebFilterChain apiSecurityChain(ServerHttpSecurity http, ApiProperties props, ApiKeyService keys,
                                            RateLimiter limiter, ObjectMapper json) {
        http.securityMatcher(ServerWebExchangeMatchers.pathMatchers("/v1/**", "/tokenize", "/detokenize",
                        "/health", "/version"))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .authorizeExchange(a -> a.anyExchange().permitAll());
        if (props.authDisabled()) {
            log.warn("strata.api.auth=none: the model API (/v1/**, /tokenize, /detokenize) accepts requests WITHOUT an API key");
        } else {
            http.addFilterAt(new ApiKeyAuthFilter(keys, limiter, json), SecurityWebFiltersOrder.AUTHENTICATION);
        }
        return http.build();
    }
}
