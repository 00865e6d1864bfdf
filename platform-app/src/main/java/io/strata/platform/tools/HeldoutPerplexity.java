package io.strata.platform.tools;

import io.strata.model.config.ModelConfigParser;
import io.strata.platform.StrataApplication;
import io.strata.platform.engine.FinishReason;
import io.strata.platform.engine.GenerationEvent;
import io.strata.platform.engine.GenerationRequest;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.TrainingCard;
import io.strata.platform.engine.sampling.SampledToken;
import io.strata.platform.engine.sampling.SamplingParams;
import io.strata.platform.tokenizer.ModelTokenizer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

/**
 * Held-out perplexity of a model folder as Strata computes it, to cross-check the trainer's figure in
 * {@code model_card.json} ({@link PerplexityDefinition} says what is measured):
 * <pre>
 * HeldoutPerplexity &lt;modelDir&gt; [textFile] [--strata.property=value ...]
 * </pre>
 * The text defaults to the card's {@code heldout_file}, else {@code heldout.txt} in the folder. The model is
 * served by the platform itself (plugins from {@code strata.plugins.dir}, default {@code ./plugins}; the CPU
 * backend unless {@code --strata.backend=} says otherwise; an in-memory database, no listening port beyond
 * loopback), and every chunk is sent to the engine as a prompt with prompt logprobs, exactly as
 * {@code /v1/completions} with {@code prompt_logprobs} would. Prints the tokens scored, the mean NLL, the
 * perplexity, and the card's value with the relative difference. Exit status 0; 2 for bad arguments.
 */
public final class HeldoutPerplexity {
    /** Longest a chunk may take on a slow CPU before the run is declared stuck. */
    static final Duration CHUNK_TIMEOUT = Duration.ofMinutes(30);

    private HeldoutPerplexity() {
    }

    public static void main(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        List<String> properties = new ArrayList<>();
        for (String a : args) {
            (a.startsWith("--") ? properties : positional).add(a);
        }
        if (positional.isEmpty() || positional.size() > 2) {
            System.err.println("usage: HeldoutPerplexity <modelDir> [textFile] [--strata.property=value ...]");
            System.exit(2);
        }
        Path dir = Path.of(positional.get(0)).toAbsolutePath().normalize();
        Optional<TrainingCard> card = TrainingCard.read(dir);
        Path text = positional.size() > 1 ? Path.of(positional.get(1))
                : card.flatMap(c -> c.heldoutPath(dir)).orElse(dir.resolve("heldout.txt"));
        if (!Files.isRegularFile(text)) {
            System.err.println("no held-out text at " + text);
            System.exit(2);
        }
        List<int[]> chunks;
        try (ModelTokenizer tokenizer = ModelTokenizer.load(dir)) {
            chunks = PerplexityDefinition.chunks(tokenizer.encode(Files.readString(text)));
        }
        boolean quantized = ModelConfigParser.parse(dir.resolve("config.json")).quantized();
        PerplexityDefinition.Score score;
        try (ConfigurableApplicationContext app = start(dir, properties)) {
            score = score(app.getBean(InferenceEngine.class), chunks);
        }
        report(System.out, dir, text, chunks.size(), score, card.map(c -> c.heldoutPerplexity(quantized)).orElse(null),
                quantized);
    }

    /** The platform serving {@code dir}, quietly, with throwaway state. */
    static ConfigurableApplicationContext start(Path dir, List<String> extra) {
        List<String> props = new ArrayList<>(List.of(
                "--strata.model.path=" + dir,
                "--strata.backend=cpu",
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--spring.datasource.url=jdbc:h2:mem:heldout-perplexity-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                "--strata.admin.initial-password=" + UUID.randomUUID(),
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN"));
        props.addAll(extra); // later arguments win
        return new SpringApplicationBuilder(StrataApplication.class).run(props.toArray(String[]::new));
    }

    /** Scores {@code chunks} on the engine: one prompt each, with the logprob of every prompt position. */
    public static PerplexityDefinition.Score score(InferenceEngine engine, List<int[]> chunks) {
        PerplexityDefinition.Score score = PerplexityDefinition.Score.NONE;
        for (int i = 0; i < chunks.size(); i++) {
            score = score.plusChunk(promptLogprobs(engine, "heldout-" + i, chunks.get(i)));
        }
        return score;
    }

    /** Logprob of each token of {@code prompt} given those before it; entry 0 is NaN (nothing predicts it). */
    static double[] promptLogprobs(InferenceEngine engine, String id, int[] prompt) {
        SamplingParams params = SamplingParams.builder().temperature(0).maxTokens(1).promptLogprobs(0).build();
        List<GenerationEvent> events = engine.submit(new GenerationRequest(id, prompt, params, 0, null))
                .events().collectList().block(CHUNK_TIMEOUT);
        List<SampledToken> lps = null;
        for (GenerationEvent e : events) {
            if (e instanceof GenerationEvent.Started s) {
                lps = s.promptLogprobs();
            } else if (e instanceof GenerationEvent.Finished f && f.reason() == FinishReason.ERROR) {
                throw new IllegalStateException("request " + id + " failed: " + f.error());
            }
        }
        if (lps == null || lps.size() != prompt.length) {
            throw new IllegalStateException("request " + id + ": expected " + prompt.length + " prompt logprobs, got "
                    + (lps == null ? "none" : lps.size()));
        }
        double[] out = new double[prompt.length];
        out[0] = Double.NaN;
        for (int p = 1; p < prompt.length; p++) {
            out[p] = lps.get(p).logprob();
        }
        return out;
    }

    static void report(PrintStream out, Path dir, Path text, int chunks, PerplexityDefinition.Score score,
                       Double cardValue, boolean quantized) {
        out.printf(Locale.ROOT, "model:          %s%n", dir);
        out.printf(Locale.ROOT, "text:           %s%n", text);
        out.printf(Locale.ROOT, "chunks:         %d (at most %d tokens, BOS first)%n", chunks, PerplexityDefinition.MAX_CHUNK);
        out.printf(Locale.ROOT, "tokens scored:  %d%n", score.tokens());
        out.printf(Locale.ROOT, "mean NLL:       %.6f nats%n", score.meanNll());
        out.printf(Locale.ROOT, "perplexity:     %.4f%n", score.perplexity());
        String field = quantized ? "heldout.fp8.perplexity" : "heldout.bf16.perplexity";
        if (cardValue == null) {
            out.printf(Locale.ROOT, "card:           no %s in %s%n", field, TrainingCard.FILE_NAME);
        } else {
            out.printf(Locale.ROOT, "card:           %.4f (%s)%n", cardValue, field);
            out.printf(Locale.ROOT, "relative diff:  %+.2f %%%n", 100 * (score.perplexity() - cardValue) / cardValue);
        }
    }
}
