package io.strata.platform.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.web.reactive.function.server.RequestPredicates.GET;

/**
 * Stopping the server lets requests in flight finish, but only for strata.shutdown.drain-timeout
 * (2 s in TestPlatform): a request that needs longer is cut off and shutdown does not wait for it.
 */
class GracefulShutdownTest {
    /** Under /css/** because the console chain lets that through without login; the route wins over static files. */
    private static final String SLOW = "/css/slow-for-drain-test";

    @TempDir
    Path home;

    @Test
    void aRequestInFlightCompletesDuringTheDrain() throws Exception {
        try (TestPlatform platform = TestPlatform.in(home)) {
            CountDownLatch arrived = new CountDownLatch(1);
            platform.start(slowRoute(arrived));
            CompletableFuture<HttpResponse<String>> response = get(platform, 1200);
            assertThat(arrived.await(30, TimeUnit.SECONDS)).isTrue();

            platform.stop();

            HttpResponse<String> answered = response.get(30, TimeUnit.SECONDS);
            assertThat(answered.statusCode()).isEqualTo(200);
            assertThat(answered.body()).isEqualTo("drained");
        }
    }

    @Test
    void aRequestLongerThanTheDrainTimeoutDoesNotHoldUpShutdown() throws Exception {
        try (TestPlatform platform = TestPlatform.in(home)) {
            CountDownLatch arrived = new CountDownLatch(1);
            platform.start(slowRoute(arrived));
            CompletableFuture<HttpResponse<String>> response = get(platform, 60_000);
            assertThat(arrived.await(30, TimeUnit.SECONDS)).isTrue();

            long start = System.nanoTime();
            platform.stop();
            long stopMillis = (System.nanoTime() - start) / 1_000_000;

            assertThat(stopMillis).as("shutdown waited only for the drain timeout").isLessThan(30_000);
            assertThat(response).failsWithin(Duration.ofSeconds(30));
        }
    }

    private static ApplicationContextInitializer<ConfigurableApplicationContext> slowRoute(CountDownLatch arrived) {
        RouterFunction<ServerResponse> route = RouterFunctions.route(GET(SLOW), request -> {
            arrived.countDown();
            long millis = Long.parseLong(request.queryParam("ms").orElse("0"));
            return Mono.delay(Duration.ofMillis(millis)).then(ServerResponse.ok().bodyValue("drained"));
        });
        return context -> ((GenericApplicationContext) context).registerBean("slowForDrainTest", RouterFunction.class, () -> route);
    }

    private static CompletableFuture<HttpResponse<String>> get(TestPlatform platform, long millis) {
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(URI.create(platform.baseUrl() + SLOW + "?ms=" + millis))
                .timeout(Duration.ofSeconds(120)).build();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }
}
