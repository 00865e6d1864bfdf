package io.strata.platform.api;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.ObjectMapper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Test requests over the real HTTP API: many greedy completions at once, for comparing servers' texts. */
public final class GreedyCompletions {

    private GreedyCompletions() {
    }

    /** Greedy completions (8 tokens, EOS ignored) of all prompts sent at once; the texts in prompt order. */
    public static List<String> concurrently(int port, String key, List<int[]> prompts, ObjectMapper json) {
        WebClient client = WebClient.builder().baseUrl("http://localhost:" + port)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(4 * 1024 * 1024)).build();
        List<String> bodies = Flux.fromIterable(prompts)
                .flatMapSequential(p -> client.post().uri("/v1/completions").header("Authorization", "Bearer " + key)
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("prompt", p, "max_tokens", 8, "temperature", 0.0, "ignore_eos", true))
                        .retrieve().bodyToMono(String.class), prompts.size())
                .collectList().block(Duration.ofMinutes(5));
        List<String> texts = new ArrayList<>();
        for (String body : bodies) {
            texts.add(json.readTree(body).get("choices").get(0).get("text").stringValue());
        }
        return texts;
    }
}
