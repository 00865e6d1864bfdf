package io.strata.platform.api;

import io.strata.platform.chat.ChatCompletionParser;
import io.strata.platform.chat.ChatDelta;
import io.strata.platform.chat.ParsedCompletion;
import io.strata.platform.chat.ToolCall;
import io.strata.platform.chat.ToolCallDelta;
import io.strata.platform.engine.FinishReason;
import io.strata.platform.engine.GenerationEvent;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.TextCodec;
import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.requestlog.RequestLogWriter;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code POST /v1/chat/completions}: DeepSeek-V4 chat encoding in, {@code reasoning_content},
 * {@code content} and {@code tool_calls} out (parsed incrementally while streaming).
 */
@RestController
public class ChatCompletionsController {
    private final InferenceEngine engine;
    private final ServedModelResolver models;
    private final ApiProperties props;
    private final RequestLogWriter requestLog;
    private final ObjectMapper json;
    private final ChatPromptBuilder prompts;
    private final SseWriter sse;

    public ChatCompletionsController(InferenceEngine engine, ServedModelResolver models, ApiProperties props,
                                     RequestLogWriter requestLog, ObjectMapper json, ChatPromptBuilder prompts) {
        this.engine = engine;
        this.models = models;
        this.props = props;
        this.requestLog = requestLog;
        this.json = json;
        this.prompts = prompts;
        this.sse = new SseWriter(json);
    }

    @PostMapping(path = "/v1/chat/completions", consumes = MediaType.APPLICATION_JSON_VALUE)
    Mono<Void> chat(@RequestBody String body, ServerWebExchange exchange) {
        RequestTrace trace = new RequestTrace(requestLog, exchange, "chatcmpl-", "/v1/chat/completions");
        return trace.guard(() -> run(body, exchange, trace));
    }

    private Mono<Void> run(String body, ServerWebExchange exchange, RequestTrace trace) {
        RequestFields f = RequestFields.parse(json, body);
        ModelCard card = models.resolve(f.string("model", null));
        String modelName = models.servedName();
        trace.model(modelName);
        ChatPromptBuilder.ChatPrompt prompt = prompts.build(f);
        trace.prompt(prompt.text(), prompt.ids().length);
        int n = f.choiceCount();
        boolean stream = f.bool("stream", false);
        boolean includeUsage = StreamOptions.includeUsage(f, stream);
        boolean logprobs = f.bool("logprobs", false);
        Integer top = f.integer("top_logprobs", null);
        if (top != null && !logprobs) {
            throw ApiException.invalid("top_logprobs", "top_logprobs requires logprobs to be true");
        }
        Integer maxTokens = f.integer("max_completion_tokens", null);
        if (maxTokens == null) {
            maxTokens = f.integer("max_tokens", null);
        }
        SamplingParams params = SamplingRequestParser.read(f)
                .logprobs(logprobs ? (top == null ? 0 : top) : null)
                .maxTokens(ContextLimit.resolveMaxTokens(prompt.ids().length, maxTokens, card.maxModelLen()))
                .skipSpecialTokens(false) // the output parser needs </think>, DSML markers and EOS as text
                .build(props.maxLogprobs(), card.vocabSize());
        long created = System.currentTimeMillis() / 1000;
        Flux<ChoiceEvent> events = ChoiceFanOut.submit(engine, trace.id(), prompt.ids(), params, n,
                f.integer("priority", 0), f.string("cache_salt", null)).doOnNext(e -> trace.observe(e.event()));
        ChatAssembler assembler = new ChatAssembler(trace.id(), created, modelName, engine.codec(), n, prompt,
                params.promptLogprobs() != null, prompt.ids().length).withMode(prompt.mode());
        return assembler.respond(events, stream, includeUsage, sse, trace, exchange.getResponse());
    }

    /** Per-choice parsing state and response building. */
    static final class ChatAssembler implements ChoiceAssembler<ChatCompletionResponse> {
        private final String id;
        private final long created;
        private final String model;
        private final TextCodec codec;
        private final ChoiceState[] choices;
        private final ChatCompletionParser[] parsers;
        private final List<List<SampledToken>> logprobs;
        private final boolean[] roleSent;
        private final boolean[] sawToolCall;
        private final boolean promptLogprobs;
        private final int promptTokens;
        volatile ApiException failure;

        ChatAssembler(String id, long created, String model, TextCodec codec, int n, ChatPromptBuilder.ChatPrompt prompt,
                      boolean promptLogprobs, int promptTokens) {
            this.id = id;
            this.created = created;
            this.model = model;
            this.codec = codec;
            this.choices = new ChoiceState[n];
            this.parsers = new ChatCompletionParser[n];
            this.logprobs = new ArrayList<>(n);
            this.roleSent = new boolean[n];
            this.sawToolCall = new boolean[n];
            for (int i = 0; i < n; i++) {
                choices[i] = new ChoiceState();
                parsers[i] = new ChatCompletionParser(prompt.mode());
                logprobs.add(new ArrayList<>());
            }
            this.promptLogprobs = promptLogprobs;
            this.promptTokens = promptTokens;
        }

        private Usage usage() {
            int completion = 0;
            for (ChoiceState c : choices) {
                completion += c.finished == null ? 0 : c.finished.completionTokens();
            }
            int cached = choices[0].started == null ? 0 : choices[0].started.cachedTokens();
            return Usage.of(promptTokens, completion, cached);
        }

        private String finishReason(int i) {
            ChoiceState c = choices[i];
            if (c.reason() == FinishReason.STOP && sawToolCall[i]) {
                return "tool_calls";
            }
            return c.reason().wire();
        }

        private void onFailure(GenerationEvent.Finished fin) {
            if (fin.reason() == FinishReason.ERROR && failure == null) {
                failure = new ApiException(HttpStatus.INTERNAL_SERVER_ERROR, "InternalServerError", null,
                        "Generation failed: " + fin.error());
            }
        }

        @Override
        public ApiException failure() {
            return failure;
        }

        @Override
        public Mono<ChatCompletionResponse> collect(Flux<ChoiceEvent> events) {
            return events.doOnNext(ev -> {
                ChoiceState c = choices[ev.index()];
                switch (ev.event()) {
                    case GenerationEvent.Started s -> c.started = s;
                    case GenerationEvent.Delta d -> {
                        c.text.append(d.text());
                        if (d.logprobs() != null) {
                            logprobs.get(ev.index()).addAll(d.logprobs());
                        }
                    }
                    case GenerationEvent.Finished fin -> {
                        c.finished = fin;
                        onFailure(fin);
                    }
                }
            }).then(Mono.fromSupplier(() -> {
                List<Object> out = new ArrayList<>(choices.length);
                for (int i = 0; i < choices.length; i++) {
                    ParsedCompletion parsed = ChatCompletionParser.parse(choices[i].text.toString(), thinkingMode);
                    List<ChatCompletionResponse.ToolCallOut> calls = null;
                    if (!parsed.toolCalls().isEmpty()) {
                        sawToolCall[i] = true;
                        calls = new ArrayList<>();
                        for (ToolCall tc : parsed.toolCalls()) {
                            calls.add(new ChatCompletionResponse.ToolCallOut(null, tc.id(), "function",
                                    new ChatCompletionResponse.FunctionOut(tc.function().name(), tc.function().arguments())));
                        }
                    }
                    ChatCompletionResponse.Message msg = new ChatCompletionResponse.Message("assistant",
                            parsed.content(), parsed.reasoningContent().isEmpty() ? null : parsed.reasoningContent(), calls == null ? List.of() : calls);
                    LogprobEntries.ChatLogprobs lp = choices[i].started != null && !logprobs.get(i).isEmpty()
                            ? LogprobEntries.ChatLogprobs.of(logprobs.get(i), codec) : null;
                    out.add(new ChatCompletionResponse.Choice(i, msg, lp, finishReason(i),
                            choices[i].finished == null ? null : choices[i].finished.stopReason()));
                }
                return new ChatCompletionResponse(id, "chat.completion", created, model, out, usage(),
                        promptLogprobs && choices[0].started != null
                                ? LogprobEntries.promptLogprobs(choices[0].started.promptLogprobs(), codec) : null);
            }));
        }

        private io.strata.platform.chat.ThinkingMode thinkingMode;

        ChatAssembler withMode(io.strata.platform.chat.ThinkingMode mode) {
            this.thinkingMode = mode;
            return this;
        }

        @Override
        public Flux<byte[]> stream(Flux<ChoiceEvent> events, boolean includeUsage, SseWriter sse) {
            Flux<byte[]> body = events.concatMap(ev -> {
                int i = ev.index();
                ChoiceState c = choices[i];
                return switch (ev.event()) {
                    case GenerationEvent.Started s -> {
                        c.started = s;
                        roleSent[i] = true;
                        yield Flux.just(sse.event(chunk(i, new ChatCompletionResponse.Delta("assistant", "", null, null), null, null, null)));
                    }
                    case GenerationEvent.Delta d -> {
                        ChatDelta delta = parsers[i].feed(d.text());
                        LogprobEntries.ChatLogprobs lp = d.logprobs() == null || d.logprobs().isEmpty() ? null
                                : LogprobEntries.ChatLogprobs.of(d.logprobs(), codec);
                        yield delta.isEmpty() && lp == null ? Flux.<byte[]>empty()
                                : Flux.just(sse.event(chunk(i, toDelta(i, delta), lp, null, null)));
                    }
                    case GenerationEvent.Finished fin -> {
                        c.finished = fin;
                        onFailure(fin);
                        if (failure != null) {
                            yield Flux.just(sse.event(failure.body()));
                        }
                        ChatDelta rest = parsers[i].finish();
                        List<byte[]> out = new ArrayList<>(2);
                        if (!rest.isEmpty()) {
                            out.add(sse.event(chunk(i, toDelta(i, rest), null, null, null)));
                        }
                        out.add(sse.event(chunk(i, new ChatCompletionResponse.Delta(null, null, null, null), null,
                                finishReason(i), fin.stopReason())));
                        yield Flux.fromIterable(out);
                    }
                };
            }).takeUntil(b -> failure != null);
            Flux<byte[]> tail = Flux.defer(() -> includeUsage && failure == null
                    ? Flux.just(sse.event(new ChatCompletionResponse(id, "chat.completion.chunk", created, model,
                    List.of(), usage(), null)))
                    : Flux.empty());
            return Flux.concat(body, tail)
                    .onErrorResume(e -> Flux.just(sse.event(ErrorResponse.of(500, "InternalServerError", null,
                            "Generation failed: " + e.getMessage()))))
                    .concatWith(Mono.fromSupplier(SseWriter::done));
        }

        private ChatCompletionResponse.Delta toDelta(int i, ChatDelta d) {
            List<ChatCompletionResponse.ToolCallOut> calls = null;
            if (!d.toolCalls().isEmpty()) {
                sawToolCall[i] = true;
                calls = new ArrayList<>(d.toolCalls().size());
                for (ToolCallDelta t : d.toolCalls()) {
                    calls.add(new ChatCompletionResponse.ToolCallOut(t.index(), t.id(), t.id() == null ? null : "function",
                            new ChatCompletionResponse.FunctionOut(t.name(), t.arguments())));
                }
            }
            return new ChatCompletionResponse.Delta(null, d.content().isEmpty() ? null : d.content(),
                    d.reasoningContent().isEmpty() ? null : d.reasoningContent(), calls);
        }

        private ChatCompletionResponse chunk(int index, ChatCompletionResponse.Delta delta, LogprobEntries.ChatLogprobs lp,
                                             String finish, Object stopReason) {
            return new ChatCompletionResponse(id, "chat.completion.chunk", created, model,
                    List.of(new ChatCompletionResponse.ChunkChoice(index, delta, lp, finish, stopReason)), null, null);
        }
    }
}
