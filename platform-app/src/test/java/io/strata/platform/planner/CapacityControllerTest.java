package io.strata.platform.planner;

import org.junit.jupiter.api.Test;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The JSON endpoint over real request handling (security is the foundation's concern: /admin/** is admin-only). */
class CapacityControllerTest {

    final WebTestClient client = WebTestClient.bindToController(new CapacityController()).build();

    @Test
    void reportsFlashAndTheFit() {
        client.get().uri("/admin/api/capacity?model=flash&context=131072&memoryGib=80").exchange()
                .expectStatus().isOk()
                .expectBody()
                .jsonPath("$.model").isEqualTo("deepseek-v4-flash")
                .jsonPath("$.kv").isEqualTo("fp8+fp4")
                .jsonPath("$.bucketRowBytes.large").isEqualTo(784_896)
                .jsonPath("$.sequence.context").isEqualTo(131_072)
                .jsonPath("$.fit.sequences").isEqualTo(179)
                .jsonPath("$.vllm.blockIdBytes").isEqualTo(1_051_776)
                .jsonPath("$.seeds[1].bytes").isEqualTo(10_334_371_840L);
    }

    @Test
    void badInputIsA400NamingTheParameter() {
        client.get().uri("/admin/api/capacity?context=-1").exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error").isEqualTo("context must be in [1, 2^40], got -1");
        client.get().uri("/admin/api/capacity?model=/etc/passwd").exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error").value(e -> org.assertj.core.api.Assertions.assertThat((String) e).startsWith("unknown model"));
        client.get().uri("/admin/api/capacity?kv=fp8%2Bfp16").exchange()
                .expectStatus().isBadRequest();
    }
}
