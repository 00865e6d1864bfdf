package io.strata.platform.security;

import io.strata.platform.config.ConsoleSecurityProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.web.server.DelegatingServerAuthenticationEntryPoint;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.HttpStatusServerEntryPoint;
import org.springframework.security.web.server.authentication.RedirectServerAuthenticationEntryPoint;
import org.springframework.security.web.server.csrf.CookieServerCsrfTokenRepository;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestAttributeHandler;
import org.springframework.security.web.server.header.ReferrerPolicyServerHttpHeadersWriter.ReferrerPolicy;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;

/**
 * The catch-all security chain: the admin console and everything not claimed by a more specific
 * chain. API paths ({@code /v1/**}, {@code /tokenize}, {@code /detokenize}) get their own chain with
 * API-key auth at a higher precedence; until it exists they are refused here with 401.
 *
 * <p>CSRF protection stays on for every state change, including {@code /admin/api/**}. The token is
 * kept in the {@code XSRF-TOKEN} cookie; forms carry it as {@code _csrf}, scripts send it back in the
 * {@code X-XSRF-TOKEN} header (see docs/operations.md).
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
public class ConsoleSecurityConfiguration {

    /** Content-Security-Policy of every page: no inline script, no third-party origin. */
    static final String CONTENT_SECURITY_POLICY =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                    + "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

    @Bean
    PasswordEncoder passwordEncoder() {
        return PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    @Bean
    @Order(Ordered.LOWEST_PRECEDENCE)
    SecurityWebFilterChain consoleSecurityChain(ServerHttpSecurity http, ConsoleSecurityProperties properties) {
        ServerWebExchangeMatcher apiPaths = ServerWebExchangeMatchers.pathMatchers(
                "/v1/**", "/tokenize", "/detokenize", "/admin/api/**", "/actuator/**");
        DelegatingServerAuthenticationEntryPoint entryPoint = new DelegatingServerAuthenticationEntryPoint(
                new DelegatingServerAuthenticationEntryPoint.DelegateEntry(apiPaths,
                        new HttpStatusServerEntryPoint(HttpStatus.UNAUTHORIZED)));
        entryPoint.setDefaultEntryPoint(new RedirectServerAuthenticationEntryPoint("/login"));

        CookieServerCsrfTokenRepository csrfTokens = CookieServerCsrfTokenRepository.withHttpOnlyFalse();
        csrfTokens.setCookiePath("/");
        // The plain handler (not the XOR one) so a script can echo the cookie value as the header.
        ServerCsrfTokenRequestAttributeHandler csrfHandler = new ServerCsrfTokenRequestAttributeHandler();
        // the plugin upload form is multipart; its _csrf field must be read from there
        csrfHandler.setTokenFromMultipartDataEnabled(true);

        return http
                .authorizeExchange(auth -> {
                    auth.pathMatchers("/actuator/health", "/actuator/health/**").permitAll();
                    if (properties.publicMetrics()) {
                        auth.pathMatchers("/actuator/prometheus", "/actuator/info").permitAll();
                    }
                    auth.pathMatchers("/login", "/css/**", "/js/**", "/img/**", "/favicon.ico").permitAll()
                            .pathMatchers("/v1/**", "/tokenize", "/detokenize").denyAll()
                            .pathMatchers("/admin", "/admin/**", "/actuator/**").hasRole(DatabaseUserDetailsService.ADMIN_ROLE)
                            .anyExchange().authenticated();
                })
                .formLogin(form -> form.loginPage("/login").authenticationEntryPoint(entryPoint))
                .logout(logout -> logout.logoutUrl("/logout"))
                .exceptionHandling(ex -> ex.authenticationEntryPoint(entryPoint))
                .csrf(csrf -> csrf.csrfTokenRepository(csrfTokens).csrfTokenRequestHandler(csrfHandler))
                .headers(headers -> headers
                        .contentSecurityPolicy(csp -> csp.policyDirectives(CONTENT_SECURITY_POLICY))
                        .referrerPolicy(ref -> ref.policy(ReferrerPolicy.SAME_ORIGIN)))
                .build();
    }
}
