package io.strata.platform.engine;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a training run says about the model it wrote: {@code model_card.json} beside {@code config.json}
 * (written by {@code tools/train-demo}). Not {@link ModelCard}, which is the served model as the API lists it.
 * Read leniently: unknown fields are ignored, a missing or mistyped field is null (absent), and {@code layers}
 * keeps each entry as text (a layer kind such as {@code "c4a"} or a compress ratio such as {@code 4}).
 *
 * @param heldoutPerplexity          exact-mode perplexity of the BF16 export on {@code heldoutFile}
 * @param heldoutPerplexityQuantized the same for the FP8/FP4 export
 * @param heldoutFile                held-out text beside the card (normally {@code heldout.txt})
 * @param perplexityDefinition       how the perplexities were computed, in the trainer's words
 */
public record TrainingCard(String name, String kind, Long parameters, List<String> layers, String data,
                           String license, Long tokensTrained, Double trainMinutes, String device, Double trainLoss,
                           Double heldoutPerplexity, Double heldoutPerplexityQuantized, String heldoutFile,
                           String perplexityDefinition, String date) {
    public static final String FILE_NAME = "model_card.json";

    public TrainingCard {
        layers = layers == null ? List.of() : List.copyOf(layers);
    }

    /** The card in {@code modelDir}, or empty when there is none; a file that is not a JSON object is an error. */
    public static Optional<TrainingCard> read(Path modelDir) throws IOException {
        Path file = modelDir.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        JsonNode root = JsonMapper.shared().readTree(file.toFile());
        if (root == null || !root.isObject()) {
            throw new IOException(file + " is not a JSON object");
        }
        return Optional.of(of(root));
    }

    /**
     * The fields {@code tools/train-demo/train.py} writes: {@code description} ("trained demo: …"),
     * {@code data.source} / {@code data.licence}, {@code final_train_loss}, and {@code heldout} with the text
     * file, the definition and the {@code bf16} / {@code fp8} exports' figures.
     */
    static TrainingCard of(JsonNode n) {
        List<String> layers = new ArrayList<>();
        JsonNode l = n.get("layers");
        if (l != null && l.isArray()) {
            l.forEach(e -> layers.add(e.isValueNode() ? e.asString() : e.toString()));
        }
        String description = text(n, "/description");
        String kind = description == null ? null
                : description.contains(":") ? description.substring(0, description.indexOf(':')).trim() : description;
        return new TrainingCard(text(n, "/name"), kind, integer(n, "/parameters"), layers, text(n, "/data/source"),
                text(n, "/data/licence"), integer(n, "/tokens_trained"), number(n, "/train_minutes"),
                text(n, "/device"), number(n, "/final_train_loss"), number(n, "/heldout/bf16/perplexity"),
                number(n, "/heldout/fp8/perplexity"), text(n, "/heldout/text_file"), text(n, "/heldout/definition"),
                text(n, "/date"));
    }

    /** The held-out text file this card names, resolved in {@code modelDir}; empty when the card names none. */
    public Optional<Path> heldoutPath(Path modelDir) {
        return heldoutFile == null || heldoutFile.isBlank() ? Optional.empty() : Optional.of(modelDir.resolve(heldoutFile));
    }

    /** The perplexity the card reports for these weights: the quantized figure for an FP8/FP4 checkpoint. */
    public Double heldoutPerplexity(boolean quantized) {
        return quantized ? heldoutPerplexityQuantized : heldoutPerplexity;
    }

    private static String text(JsonNode n, String pointer) {
        JsonNode v = n.at(pointer);
        return v == null || v.isMissingNode() || v.isNull() || !v.isValueNode() ? null : v.asString();
    }

    private static Long integer(JsonNode n, String pointer) {
        JsonNode v = n.at(pointer);
        return v != null && v.isNumber() ? v.asLong() : null;
    }

    private static Double number(JsonNode n, String pointer) {
        JsonNode v = n.at(pointer);
        return v != null && v.isNumber() ? v.asDouble() : null;
    }
}
