package io.strata.platform.api;

import io.strata.platform.engine.TextCodec;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A prompt as OpenAI allows it: a string or an array of token ids. {@code text} is the prompt as text
 * (decoded when ids were sent), for echo and the request log.
 */
record PromptInput(int[] ids, String text) {

    /**
     * The prompts of a completions request: a string, an array of token ids, or a batch, i.e. an array of
     * strings and/or token-id arrays, each becoming its own choices.
     */
    static List<PromptInput> readAll(JsonNode node, String param, TextCodec codec, int vocab, boolean addSpecialTokens) {
        if (node == null) {
            throw ApiException.invalid(param, param + " is required");
        }
        if (node.isString()) {
            return List.of(fromText(node.stringValue(), param, codec, addSpecialTokens));
        }
        if (!node.isArray()) {
            throw ApiException.invalid(param, param + " must be a string, an array of token ids, or an array of them");
        }
        if (node.isEmpty()) {
            throw ApiException.invalid(param, param + " must not be empty");
        }
        if (node.get(0).isNumber()) {
            return List.of(fromIds(node, param, codec, vocab));
        }
        List<PromptInput> prompts = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode one = node.get(i);
            String name = param + "[" + i + "]";
            if (one.isString()) {
                prompts.add(fromText(one.stringValue(), name, codec, addSpecialTokens));
            } else if (one.isArray() && !one.isEmpty() && one.get(0).isNumber()) {
                prompts.add(fromIds(one, name, codec, vocab));
            } else {
                throw ApiException.invalid(param, name + " must be a string or a non-empty array of token ids");
            }
        }
        return prompts;
    }

    private static PromptInput fromIds(JsonNode node, String param, TextCodec codec, int vocab) {
        int[] ids = RequestFields.tokenArray(node, param, vocab);
        return new PromptInput(ids, codec.decode(ids, true));
    }

    private static PromptInput fromText(String text, String param, TextCodec codec, boolean addSpecialTokens) {
        int[] ids = codec.encode(text, addSpecialTokens);
        if (ids.length == 0) {
            throw ApiException.invalid(param, param + " must not be empty");
        }
        return new PromptInput(ids, text);
    }
}
