package io.strata.platform.api;

import io.strata.platform.engine.FinishReason;
import io.strata.platform.engine.GenerationEvent;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.TextCodec;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.requestlog.RequestLogWriter;
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

/** {@code POST /v1/completions}: OpenAI's legacy completions with vLLM's extra sampling fields. */
@RestController
public class CompletionsController {
    private final InferenceEngine engine;
    private final ServedModelResolver models;
    private final ApiProperties props;
    private final RequestLogWriter requestLog;
    private final ObjectMapper json;
    private final SseWriter sse;

    public CompletionsController(InferenceEngine engine, ServedModelResolver models, ApiProperties props,
                                 RequestLogWriter requestLog, ObjectMapper json) {
        this.engine = engine;
        this.models = models;
        this.props = props;
        this.requestLog = requestLog;
        this.json = json;
        this.sse = new SseWriter(json);
    }

    @PostMapping(path = "/v1/completions", consumes = MediaType.APPLICATION_JSON_VALUE)
    Mono<Void> completions(@RequestBody String body, ServerWebExchange exchange) {
        RequestTrace trace = new RequestTrace(requestLog, exchange, "cmpl-", "/v1/completions");
        return trace.guard(() -> run(body, exchange, trace));
    }

    private Mono<Void> run(String body, ServerWebExchange exchange, RequestTrace trace) {
        RequestFields f = RequestFields.parse(json, body);
        ModelCard card = models.resolve(f.string("model", null));
        String modelName = models.servedName();
        trace.model(modelName);
        TextCodec codec = engine.codec();
        List<PromptInput> prompts = PromptInput.readAll(f.raw("prompt"), "prompt", codec, card.vocabSize(), true);
        trace.prompt(String.join("\n\n", prompts.stream().map(PromptInput::text).toList()),
                prompts.stream().mapToInt(p -> p.ids().length).sum());
        if (f.has("suffix")) {
            throw ApiException.invalid("suffix", "suffix is not supported by this model");
        }
        int n = f.choiceCount();
        if (f.has("best_of") && f.integer("best_of", n) != n) {
            throw ApiException.invalid("best_of", "best_of is not supported (must equal n)");
        }
        boolean stream = f.bool("stream", false);
        boolean includeUsage = StreamOptions.includeUsage(f, stream);
        boolean echo = f.bool("echo", false);
        Integer logprobs = f.integer("logprobs", null);
        SamplingParams.Builder sampling = SamplingRequestParser.read(f).logprobs(logprobs)
                .maxTokens(f.integer("max_tokens", 16)); // absent or null: 16, as OpenAI's completions
        if (echo && logprobs != null && sampling.promptLogprobs() == null) {
            // echo + logprobs reports the prompt's logprobs too, as OpenAI does
            sampling.promptLogprobs(logprobs);
        }
        SamplingParams params = sampling.build(props.maxLogprobs(), card.vocabSize());
        List<SamplingParams> perPrompt = new ArrayList<>(prompts.size());
        for (PromptInput p : prompts) {
            perPrompt.add(sampling.maxTokens(ContextLimit.resolveMaxTokens(p.ids().length, params.maxTokens(), card.maxModelLen()))
                    .build(props.maxLogprobs(), card.vocabSize()));
        }
        long created = System.currentTimeMillis() / 1000;
        Flux<ChoiceEvent> events = ChoiceFanOut.submit(engine, trace.id(), prompts.stream().map(PromptInput::ids).toList(),
                perPrompt, n, f.integer("priority", 0), f.string("cache_salt", null)).doOnNext(e -> trace.observe(e.event()));
        CompletionAssembler assembler = new CompletionAssembler(trace.id(), created, modelName, codec, n, echo, prompts,
                logprobs != null, params.promptLogprobs() != null);
        return assembler.respond(events, stream, includeUsage, sse, trace, exchange.getResponse());
    }

    /** Builds responses and stream chunks from the choices' events. */
    static final class CompletionAssembler implements ChoiceAssembler<CompletionResponse> {
        private final String id;
        private final long created;
        private final String model;
        private final TextCodec codec;
        private final ChoiceState[] choices;
        private final boolean echo;
        private final List<PromptInput> prompts;
        private final int n;
        private final boolean logprobs;
        private final boolean promptLogprobs;
        private volatile ApiException failure;

        CompletionAssembler(String id, long created, String model, TextCodec codec, int n, boolean echo,
                            List<PromptInput> prompts, boolean logprobs, boolean promptLogprobs) {
            this.id = id;
            this.created = created;
            this.model = model;
            this.codec = codec;
            this.n = n;
            this.choices = new ChoiceState[prompts.size() * n];
            for (int i = 0; i < choices.length; i++) {
                choices[i] = new ChoiceState();
            }
            this.echo = echo;
            this.prompts = prompts;
            this.logprobs = logprobs;
            this.promptLogprobs = promptLogprobs;
        }

        /** The prompt text of a choice (choice {@code p·n + j} belongs to prompt p). */
        private String promptText(int choice) {
            return prompts.get(choice / n).text();
        }

        @Override
        public ApiException failure() {
            return failure;
        }

        /** Prompt tokens and cached tokens count once per prompt (its first choice), completions per choice. */
        Usage usage() {
            int completion = 0;
            int cached = 0;
            int promptTokens = 0;
            for (ChoiceState c : choices) {
                completion += c.finished == null ? 0 : c.finished.completionTokens();
            }
            for (int p = 0; p < prompts.size(); p++) {
                promptTokens += prompts.get(p).ids().length;
                ChoiceState first = choices[p * n];
                if (first.started != null) {
                    cached += first.started.cachedTokens();
                }
            }
            return Usage.of(promptTokens, completion, cached);
        }

        @Override
        public Mono<CompletionResponse> collect(Flux<ChoiceEvent> events) {
            LogprobEntries.CompletionLogprobs[] lps = new LogprobEntries.CompletionLogprobs[choices.length];
            return events.doOnNext(ev -> {
                ChoiceState c = choices[ev.index()];
                switch (ev.event()) {
                    case GenerationEvent.Started s -> {
                        c.started = s;
                        if (echo) {
                            c.text.append(promptText(ev.index()));
                        }
                        if (logprobs) {
                            lps[ev.index()] = LogprobEntries.CompletionLogprobs.empty();
                            if (echo && s.promptLogprobs() != null) {
                                c.textOffset = lps[ev.index()].append(s.promptLogprobs(), codec, 0);
                            }
                        }
                    }
                    case GenerationEvent.Delta d -> {
                        if (logprobs && d.logprobs() != null) {
                            c.textOffset = lps[ev.index()].append(d.logprobs(), codec, c.text.length());
                        }
                        c.text.append(d.text());
                    }
                    case GenerationEvent.Finished fin -> {
                        c.finished = fin;
                        if (fin.reason() == FinishReason.ERROR && failure == null) {
                            failure = new ApiException(org.springframework.http.HttpStatus.INTERNAL_SERVER_ERROR,
                                    "InternalServerError", null, "Generation failed: " + fin.error());
                        }
                    }
                }
            }).then(Mono.fromSupplier(() -> {
                List<CompletionResponse.Choice> out = new ArrayList<>(choices.length);
                for (int i = 0; i < choices.length; i++) {
                    ChoiceState c = choices[i];
                    out.add(new CompletionResponse.Choice(i, c.text.toString(), lps[i], c.reason().wire(),
                            c.finished == null ? null : c.finished.stopReason(),
                            promptLogprobs && c.started != null ? LogprobEntries.promptLogprobs(c.started.promptLogprobs(), codec) : null));
                }
                return new CompletionResponse(id, "text_completion", created, model, out, usage());
            }));
        }

        @Override
        public Flux<byte[]> stream(Flux<ChoiceEvent> events, boolean includeUsage, SseWriter sse) {
            Flux<byte[]> body = events.concatMap(ev -> {
                ChoiceState c = choices[ev.index()];
                return switch (ev.event()) {
                    case GenerationEvent.Started s -> {
                        c.started = s;
                        if (!echo) {
                            yield Flux.empty();
                        }
                        LogprobEntries.CompletionLogprobs lp = null;
                        if (logprobs && s.promptLogprobs() != null) {
                            lp = LogprobEntries.CompletionLogprobs.empty();
                            c.textOffset = lp.append(s.promptLogprobs(), codec, 0);
                        }
                        c.text.append(promptText(ev.index()));
                        yield Flux.just(sse.event(chunk(ev.index(), promptText(ev.index()), lp, null, null)));
                    }
                    case GenerationEvent.Delta d -> {
                        LogprobEntries.CompletionLogprobs lp = null;
                        if (logprobs && d.logprobs() != null && !d.logprobs().isEmpty()) {
                            lp = LogprobEntries.CompletionLogprobs.empty();
                            c.textOffset = lp.append(d.logprobs(), codec, c.text.length());
                        }
                        c.text.append(d.text());
                        yield d.text().isEmpty() && lp == null ? Flux.<byte[]>empty()
                                : Flux.just(sse.event(chunk(ev.index(), d.text(), lp, null, null)));
                    }
                    case GenerationEvent.Finished fin -> {
                        c.finished = fin;
                        if (fin.reason() == FinishReason.ERROR) {
                            failure = new ApiException(org.springframework.http.HttpStatus.INTERNAL_SERVER_ERROR,
                                    "InternalServerError", null, "Generation failed: " + fin.error());
                            yield Flux.just(sse.event(failure.body()));
                        }
                        yield Flux.just(sse.event(chunk(ev.index(), "", null, fin.reason().wire(), fin.stopReason())));
                    }
                };
            }).takeUntil(b -> failure != null);
            Flux<byte[]> tail = Flux.defer(() -> includeUsage && failure == null
                    ? Flux.just(sse.event(new CompletionResponse(id, "text_completion", created, model, List.of(), usage())))
                    : Flux.empty());
            return Flux.concat(body, tail)
                    .onErrorResume(e -> Flux.just(sse.event(ErrorResponse.of(500, "InternalServerError", null,
                            "Generation failed: " + e.getMessage()))))
                    .concatWith(Mono.fromSupplier(SseWriter::done));
        }

        private CompletionResponse chunk(int index, String text, LogprobEntries.CompletionLogprobs lp, String finish, Object stopReason) {
            return new CompletionResponse(id, "text_completion", created, model,
                    List.of(new CompletionResponse.Choice(index, text, lp, finish, stopReason, null)), null);
        }
    }
}
