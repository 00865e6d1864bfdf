package io.strata.platform.web;

import org.springframework.boot.info.BuildProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Model attributes every console page uses: the CSRF token for its forms (WebFlux keeps it as a
 * lazy {@code Mono} that only resolves when someone subscribes, so it has to be handed to the view
 * explicitly), the request path for the navigation, and the version for the footer.
 */
@ControllerAdvice
public class ConsoleModelAdvice {
    private final String version;

    public ConsoleModelAdvice(ObjectProvider<BuildProperties> build) {
        BuildProperties properties = build.getIfAvailable();
        String fromJar = ConsoleModelAdvice.class.getPackage().getImplementationVersion();
        this.version = properties != null ? properties.getVersion() : fromJar != null ? fromJar : "dev";
    }

    @ModelAttribute("csrf")
    public Mono<CsrfToken> csrf(ServerWebExchange exchange) {
        Mono<CsrfToken> token = exchange.getAttribute(CsrfToken.class.getName());
        if (token == null) {
            token = exchange.getAttribute("_csrf");
        }
        return token == null ? Mono.empty() : token;
    }

    @ModelAttribute("currentPath")
    public String currentPath(ServerWebExchange exchange) {
        return exchange.getRequest().getPath().pathWithinApplication().value();
    }

    @ModelAttribute("strataVersion")
    public String strataVersion() {
        return version;
    }
}
