package io.strata.platform.console;

import io.strata.platform.engine.TrainingCard;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * "What this model is", for the Model page and its JSON: the training card ({@code model_card.json}) when the
 * folder has one, else what the fixture manifest says ({@code "weights": "seeded random …"}), else that
 * nothing is known. The texts are formatted here so the page and the JSON say the same.
 *
 * @param source   {@code card}, {@code fixture}, {@code none} or {@code error} (the card could not be read)
 * @param summary  one plain sentence for a person
 * @param card     the card as read, or null
 * @param parameters          e.g. {@code 8.9 M}; null without a card or figure
 * @param tokensTrained       e.g. {@code 120 M}
 * @param training            e.g. {@code 42 min on NVIDIA H200}
 * @param heldoutPerplexity   BF16 export, e.g. {@code 12.34}
 * @param heldoutPerplexityQuantized FP8/FP4 export
 */
public record ModelAbout(String source, String summary, TrainingCard card, String parameters, String tokensTrained,
                         String training, String heldoutPerplexity, String heldoutPerplexityQuantized) {

    static final String FIXTURE = "Test fixture, not a trained model: its weights are random numbers, generated to "
            + "check the serving path, so what it writes is meaningless.";
    static final String NO_CARD = "No model card: this folder has no " + TrainingCard.FILE_NAME
            + ", so nothing is known here about how the model was made.";

    public static ModelAbout of(Path modelDir) {
        TrainingCard card;
        try {
            card = TrainingCard.read(modelDir).orElse(null);
        } catch (Exception e) {
            return new ModelAbout("error", "The model card could not be read: " + e.getMessage(), null, null, null,
                    null, null, null);
        }
        if (card == null) {
            return randomFixture(modelDir)
                    ? new ModelAbout("fixture", FIXTURE, null, null, null, null, null, null)
                    : new ModelAbout("none", NO_CARD, null, null, null, null, null, null);
        }
        String kind = card.kind() == null ? "model" : card.kind();
        String article = "aeiou".indexOf(Character.toLowerCase(kind.isEmpty() ? 'x' : kind.charAt(0))) >= 0 ? "An " : "A ";
        String summary = article + kind + (card.name() == null ? "" : " (" + card.name() + ")")
                + (card.data() == null ? "" : ", trained on " + card.data()) + ".";
        return new ModelAbout("card", summary, card, count(card.parameters()), count(card.tokensTrained()),
                training(card), decimal(card.heldoutPerplexity()), decimal(card.heldoutPerplexityQuantized()));
    }

    /** The fixtures' manifest.json says {@code "weights": "seeded random, …"}. */
    static boolean randomFixture(Path modelDir) {
        Path manifest = modelDir.resolve("manifest.json");
        if (!Files.isRegularFile(manifest)) {
            return false;
        }
        try {
            JsonNode weights = JsonMapper.shared().readTree(manifest.toFile()).get("weights");
            return weights != null && weights.isString()
                    && weights.asString().toLowerCase(Locale.ROOT).startsWith("seeded random");
        } catch (Exception e) {
            return false;
        }
    }

    /** 8,912,896 → {@code 8.9 M}; 1.2e9 → {@code 1.2 B}; 950 → {@code 950}. */
    static String count(Long n) {
        if (n == null) {
            return null;
        }
        String[] units = {"", " K", " M", " B", " T"};
        double v = n;
        int u = 0;
        while (Math.abs(v) >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        if (u == 0) {
            return Long.toString(n);
        }
        return String.format(Locale.ROOT, Math.abs(v) < 100 ? "%.1f%s" : "%.0f%s", v, units[u]);
    }

    /** {@code 42 min on NVIDIA H200}, {@code 1 h 5 min}, or null when the card has neither. */
    static String training(TrainingCard card) {
        String time = null;
        if (card.trainMinutes() != null) {
            long m = Math.round(card.trainMinutes());
            time = card.trainMinutes() < 1 ? String.format(Locale.ROOT, "%.0f s", card.trainMinutes() * 60)
                    : m < 60 ? m + " min" : (m / 60) + " h " + (m % 60) + " min";
        }
        if (card.device() == null) {
            return time;
        }
        return time == null ? "on " + card.device() : time + " on " + card.device();
    }

    static String decimal(Double v) {
        return v == null ? null : String.format(Locale.ROOT, "%.2f", v);
    }
}
