package io.strata.platform.api;

import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.TextCodec;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.util.ArrayList;
import java.util.List;

/** vLLM's {@code POST /tokenize} (prompt or chat messages) and {@code POST /detokenize}. */
@RestController
public class TokenizeController {
    private final InferenceEngine engine;
    private final ServedModelResolver models;
    private final ObjectMapper json;
    private final ChatPromptBuilder chat;

    public TokenizeController(InferenceEngine engine, ServedModelResolver models, ObjectMapper json, ChatPromptBuilder chat) {
        this.engine = engine;
        this.models = models;
        this.json = json;
        this.chat = chat;
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record TokenizeResponse(int count, int maxModelLen, int[] tokens, List<String> tokenStrs) {
    }

    public record DetokenizeResponse(String prompt) {
    }

    @PostMapping(path = "/tokenize", consumes = MediaType.APPLICATION_JSON_VALUE)
    TokenizeResponse tokenize(@RequestBody String body) {
        RequestFields f = RequestFields.parse(json, body);
        ModelCard card = models.resolve(f.string("model", null));
        TextCodec codec = engine.codec();
        int[] ids;
        if (f.has("messages")) {
            ids = chat.build(f).ids();
        } else {
            boolean addSpecial = f.bool("add_special_tokens", true);
            JsonNode prompt = f.raw("prompt");
            if (prompt == null || !prompt.isString()) {
                throw ApiException.invalid("prompt", "prompt (a string) or messages is required");
            }
            ids = codec.encode(prompt.stringValue(), addSpecial);
        }
        List<String> strs = null;
        if (f.bool("return_token_strs", false)) {
            strs = new ArrayList<>(ids.length);
            for (int id : ids) {
                strs.add(codec.tokenText(id));
            }
        }
        return new TokenizeResponse(ids.length, card.maxModelLen(), ids, strs);
    }

    @PostMapping(path = "/detokenize", consumes = MediaType.APPLICATION_JSON_VALUE)
    DetokenizeResponse detokenize(@RequestBody String body) {
        RequestFields f = RequestFields.parse(json, body);
        ModelCard card = models.resolve(f.string("model", null));
        JsonNode tokens = f.raw("tokens");
        if (tokens == null || !tokens.isArray()) {
            throw ApiException.invalid("tokens", "tokens must be an array of token ids");
        }
        int[] ids = RequestFields.tokenArray(tokens, "tokens", card.vocabSize());
        return new DetokenizeResponse(engine.codec().decode(ids, false));
    }
}
