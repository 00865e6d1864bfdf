package io.strata.platform.keys;

import io.strata.platform.api.ServingTestConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.Map;

import static org.springframework.security.test.web.reactive.server.SecurityMockServerConfigurers.springSecurity;

/** {@code strata.api.auth=none}: the model API answers without a key; the console stays protected. */
@SpringBootTest(properties = {
        "spring.datasource.url=jdbc:h2:mem:noauth;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=no-auth-test-password",
        "strata.plugins.dir=target/no-plugins",
        "strata.api.auth=none"})
@Import(ServingTestConfiguration.class)
class OpenApiAuthTest {
    @Autowired
    ApplicationContext context;

    @Test
    void apiWorksWithoutAKeyWhenAuthIsNone() {
        WebTestClient c = WebTestClient.bindToApplicationContext(context).apply(springSecurity()).configureClient().build();
        c.get().uri("/v1/models").exchange().expectStatus().isOk();
        c.post().uri("/tokenize").contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("prompt", "hi"))
                .exchange().expectStatus().isOk();
        c.get().uri("/admin/api/keys").exchange().expectStatus().value(s -> org.assertj.core.api.Assertions.assertThat(s).isIn(302, 401, 403));
    }
}
