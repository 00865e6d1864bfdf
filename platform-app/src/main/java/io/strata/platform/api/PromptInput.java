package io.strata.platform.api;

import io.strata.platform.engine.TextCodec;
import tools.jackson.databind.JsonNode;

/**
 * A prompt as OpenAI allows it: a string, an array of token ids, or a one-element array of either.
 * {@code text} is the prompt as text (decoded when ids were sent), for echo and the request log.
 */
record PromptInput(int[] ids, String text) {

    static PromptInput read(JsonNode node, String param, TextCodec codec, int vocab, boolean addSpecialTokens) {
        if (node == null) {
            throw ApiException.invalid(param, param + " is required");
        }
        if (node.isString()) {
            return fromText(node.stringValue(), param, codec, addSpecialTokens);
        }
        if (!node.isArray()) {
            throw ApiException.invalid(param, param + " must be a string, an array of token ids, or an array with one of them");
        }
        if (node.isEmpty()) {
            throw ApiException.invalid(param, param + " must not be empty");
        }
        if (node.get(0).isNumber()) {
            int[] ids = RequestFields.tokenArray(node, param, vocab);
            return new PromptInput(ids, codec.decode(ids, true));
        }
        if (node.size() > 1) {
            throw ApiException.invalid(param, "Batched prompts are not supported: send one prompt per request (use n for several choices)");
        }
        return read(node.get(0), param, codec, vocab, addSpecialTokens);
    }

    private static PromptInput fromText(String text, String param, TextCodec codec, boolean addSpecialTokens) {
        int[] ids = codec.encode(text, addSpecialTokens);
        if (ids.length == 0) {
            throw ApiException.invalid(param, param + " must not be empty");
        }
        return new PromptInput(ids, text);
    }
}
