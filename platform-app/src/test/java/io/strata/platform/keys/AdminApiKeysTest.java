package io.strata.platform.keys;

import io.strata.platform.api.ServingTestConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.test.web.reactive.server.SecurityMockServerConfigurers.csrf;
import static org.springframework.security.test.web.reactive.server.SecurityMockServerConfigurers.mockUser;
import static org.springframework.security.test.web.reactive.server.SecurityMockServerConfigurers.springSecurity;

/** The admin REST API for keys: admins only, CSRF-protected, secret shown once, stored hashed, revocable. */
@SpringBootTest(properties = {
        "spring.datasource.url=jdbc:h2:mem:adminkeys;DB_CLOSE_DELAY=-1",
        "strata.admin.initial-password=admin-keys-test-password",
        "strata.plugins.dir=target/no-plugins"})
@Import(ServingTestConfiguration.class)
class AdminApiKeysTest {
    @Autowired
    ApplicationContext context;
    @Autowired
    ObjectMapper json;
    @Autowired
    org.springframework.jdbc.core.simple.JdbcClient jdbc;

    private WebTestClient client() {
        return WebTestClient.bindToApplicationContext(context).apply(springSecurity()).configureClient().build();
    }

    @Test
    void adminCreatesListsAndRevokesKeysAndOnlyAHashIsStored() {
        WebTestClient admin = client().mutateWith(mockUser("admin").roles("ADMIN")).mutateWith(csrf());
        JsonNode created = json.readTree(admin.post().uri("/admin/api/keys").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "ci", "rate_limit_per_minute", 100)).exchange()
                .expectStatus().isCreated().expectBody().returnResult().getResponseBody());
        String secret = created.get("secret").stringValue();
        long id = created.get("key").get("id").longValue();
        assertThat(secret).startsWith("sk-").hasSize(35);
        assertThat(created.get("key").get("prefix").stringValue()).isEqualTo(secret.substring(0, 12));

        String stored = jdbc.sql("SELECT key_hash FROM api_key WHERE id = :id").param("id", id).query(String.class).single();
        assertThat(stored).isEqualTo(ApiKeyService.hash(secret)).doesNotContain(secret);

        String list = new String(admin.get().uri("/admin/api/keys").exchange().expectStatus().isOk()
                .expectBody().returnResult().getResponseBody());
        assertThat(list).contains("\"name\":\"ci\"").doesNotContain(secret).doesNotContain(stored);

        WebTestClient api = client();
        api.get().uri("/v1/models").header("Authorization", "Bearer " + secret).exchange().expectStatus().isOk();
        admin.delete().uri("/admin/api/keys/" + id).exchange().expectStatus().isOk();
        admin.delete().uri("/admin/api/keys/" + id).exchange().expectStatus().isNotFound();
        api.get().uri("/v1/models").header("Authorization", "Bearer " + secret).exchange().expectStatus().isUnauthorized();
    }

    @Test
    void keysApiIsRefusedWithoutAdminLoginOrCsrfToken() {
        client().post().uri("/admin/api/keys").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "x")).exchange().expectStatus().value(s -> assertThat(s).isIn(302, 401, 403));
        client().mutateWith(mockUser("admin").roles("ADMIN")).post().uri("/admin/api/keys")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("name", "x"))
                .exchange().expectStatus().isForbidden();
        client().mutateWith(mockUser("admin").roles("ADMIN")).mutateWith(csrf()).post().uri("/admin/api/keys")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("name", ""))
                .exchange().expectStatus().isBadRequest();
    }
}
