package io.strata.platform.security;

import io.strata.platform.config.PlatformHome;
import io.strata.platform.config.TestPlatform;
import io.strata.platform.plugins.PluginHost;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.BodyInserters;

import java.io.IOException;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Who may reach what, over real HTTP: the console needs a login, CSRF guards every change. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConsoleSecurityTest {
    static final PlatformHome HOME = PlatformHome.temp("strata-security-");

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        HOME.register(registry);
    }

    @LocalServerPort
    int port;
    @Autowired
    PluginHost host;
    @Autowired
    AdminUserRepository users;

    WebTestClient http;

    @BeforeEach
    void client() {
        http = WebTestClient.bindToServer().baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(60)).build();
    }

    @Test
    void adminPagesRedirectToTheLoginPage() {
        for (String page : new String[]{"/admin", "/admin/plugins", "/"}) {
            http.get().uri(page).exchange()
                    .expectStatus().isFound()
                    .expectHeader().valueMatches(HttpHeaders.LOCATION, ".*/login$");
        }
    }

    @Test
    void adminJsonAndApiPathsAnswer401WithoutCredentials() {
        http.get().uri("/admin/api/plugins").exchange().expectStatus().isUnauthorized();
        http.get().uri("/v1/models").exchange().expectStatus().isUnauthorized();
    }

    @Test
    void aStateChangeWithoutLoginOrCsrfTokenIsRefusedAndChangesNothing() {
        http.post().uri("/admin/plugins/cpu/disable").exchange().expectStatus().isForbidden();
        http.post().uri("/admin/api/plugins/cpu/disable").exchange().expectStatus().isForbidden();
        assertThat(host.plugin("cpu").orElseThrow().state()).isEqualTo("STARTED");
    }

    @Test
    void theAdminPasswordIsStoredHashedNeverInClear() {
        String hash = users.find("admin").orElseThrow().passwordHash();
        assertThat(hash).startsWith("{bcrypt}").doesNotContain(TestPlatform.ADMIN_PASSWORD);
    }

    @Test
    void pagesCarrySecurityHeaders() {
        http.get().uri("/login").exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals("X-Content-Type-Options", "nosniff")
                .expectHeader().valueEquals("X-Frame-Options", "DENY")
                .expectHeader().value("Content-Security-Policy", csp -> assertThat(csp).contains("frame-ancestors 'none'"))
                .expectHeader().exists("Referrer-Policy");
    }

    @Test
    void aScriptCanLogInAndUseTheJsonApiWithTheCsrfHeader() {
        // 1. fetch the login page: it sets the XSRF-TOKEN cookie and carries the same token in the form
        EntityExchangeResult<String> loginPage = http.get().uri("/login").exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult();
        ResponseCookie xsrf = loginPage.getResponseCookies().getFirst("XSRF-TOKEN");
        assertThat(xsrf).isNotNull();
        Matcher field = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"").matcher(loginPage.getResponseBody());
        assertThat(field.find()).isTrue();

        // 2. wrong password: back to the login page with an error
        http.post().uri("/login").cookie("XSRF-TOKEN", xsrf.getValue())
                .contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .body(BodyInserters.fromFormData("username", "admin").with("password", "wrong").with("_csrf", field.group(1)))
                .exchange()
                .expectStatus().isFound()
                .expectHeader().valueMatches(HttpHeaders.LOCATION, ".*/login\\?error$");

        // 3. right password: a session cookie
        EntityExchangeResult<Void> login = http.post().uri("/login").cookie("XSRF-TOKEN", xsrf.getValue())
                .contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .body(BodyInserters.fromFormData("username", "admin").with("password", TestPlatform.ADMIN_PASSWORD)
                        .with("_csrf", field.group(1)))
                .exchange()
                .expectStatus().isFound()
                .expectBody().isEmpty();
        ResponseCookie session = login.getResponseCookies().getFirst("SESSION");
        assertThat(session).isNotNull();

        http.get().uri("/admin/api/plugins").cookie("SESSION", session.getValue()).exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$[?(@.pluginId=='cpu')].state").isEqualTo("STARTED");

        // logged in but without the CSRF header: still refused
        http.post().uri("/admin/api/plugins/cuda/disable").cookie("SESSION", session.getValue()).exchange()
                .expectStatus().isForbidden();

        // with the header echoing the cookie: accepted
        http.post().uri("/admin/api/plugins/cuda/disable")
                .cookie("SESSION", session.getValue()).cookie("XSRF-TOKEN", xsrf.getValue())
                .header("X-XSRF-TOKEN", xsrf.getValue())
                .exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.state").isEqualTo("DISABLED");
        http.post().uri("/admin/api/plugins/cuda/enable")
                .cookie("SESSION", session.getValue()).cookie("XSRF-TOKEN", xsrf.getValue())
                .header("X-XSRF-TOKEN", xsrf.getValue())
                .exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.state").isEqualTo("STARTED");
    }
}
