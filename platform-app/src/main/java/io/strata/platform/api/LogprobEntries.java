package io.strata.platform.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.strata.platform.engine.TextCodec;
import io.strata.platform.engine.sampling.SampledToken;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Logprob shapes of the two APIs, built from the engine's {@link SampledToken}s. */
final class LogprobEntries {
    private LogprobEntries() {
    }

    /** Legacy completions shape: parallel arrays plus a token→logprob map per position. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record CompletionLogprobs(List<Integer> textOffset, List<Float> tokenLogprobs, List<String> tokens,
                              List<Map<String, Float>> topLogprobs) {
        static CompletionLogprobs empty() {
            return new CompletionLogprobs(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        }

        /** Appends tokens; {@code offset} is the text offset of the first one, advanced by each token's text. */
        int append(List<SampledToken> sampled, TextCodec codec, int offset) {
            for (SampledToken t : sampled) {
                String text = t == null ? "" : codec.tokenText(t.token());
                textOffset.add(offset);
                tokens.add(text);
                tokenLogprobs.add(t == null ? null : t.logprob());
                if (t == null) {
                    topLogprobs.add(null);
                } else {
                    Map<String, Float> top = new LinkedHashMap<>();
                    for (int i = 0; i < t.top().size(); i++) {
                        top.putIfAbsent(codec.tokenText(t.top().tokens()[i]), t.top().logprobs()[i]);
                    }
                    topLogprobs.add(top);
                }
                offset += text.length();
            }
            return offset;
        }
    }

    /** Chat shape: {@code {"content":[{token, logprob, bytes, top_logprobs:[...]}]}}. */
    record ChatLogprobs(List<ChatTokenLogprob> content) {
        static ChatLogprobs of(List<SampledToken> sampled, TextCodec codec) {
            List<ChatTokenLogprob> out = new ArrayList<>(sampled.size());
            for (SampledToken t : sampled) {
                List<ChatTopLogprob> top = new ArrayList<>(t.top().size());
                for (int i = 0; i < t.top().size(); i++) {
                    int id = t.top().tokens()[i];
                    top.add(new ChatTopLogprob(codec.tokenText(id), t.top().logprobs()[i], bytes(codec, id)));
                }
                out.add(new ChatTokenLogprob(codec.tokenText(t.token()), t.logprob(), bytes(codec, t.token()), top));
            }
            return new ChatLogprobs(out);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ChatTokenLogprob(String token, float logprob, List<Integer> bytes, List<ChatTopLogprob> topLogprobs) {
    }

    record ChatTopLogprob(String token, float logprob, List<Integer> bytes) {
    }

    /** vLLM's {@code prompt_logprobs}: per position null (first) or {token_id: {logprob, rank, decoded_token}}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record PromptLogprob(float logprob, Integer rank, String decodedToken) {
    }

    static List<Map<String, PromptLogprob>> promptLogprobs(List<SampledToken> sampled, TextCodec codec) {
        if (sampled == null) {
            return null;
        }
        List<Map<String, PromptLogprob>> out = new ArrayList<>(sampled.size());
        for (SampledToken t : sampled) {
            if (t == null) {
                out.add(null);
                continue;
            }
            Map<String, PromptLogprob> m = new LinkedHashMap<>();
            m.put(Integer.toString(t.token()), new PromptLogprob(t.logprob(), t.rank(), codec.tokenText(t.token())));
            for (int i = 0; i < t.top().size(); i++) {
                int id = t.top().tokens()[i];
                m.putIfAbsent(Integer.toString(id), new PromptLogprob(t.top().logprobs()[i], i + 1, codec.tokenText(id)));
            }
            out.add(m);
        }
        return out;
    }

    private static List<Integer> bytes(TextCodec codec, int id) {
        byte[] b = codec.tokenBytes(id);
        List<Integer> out = new ArrayList<>(b.length);
        for (byte x : b) {
            out.add(x & 0xFF);
        }
        return out;
    }
}
