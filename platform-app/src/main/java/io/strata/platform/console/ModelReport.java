package io.strata.platform.console;

import io.strata.kv.BucketLayout;
import io.strata.kv.KindLayout;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.LayerSpec;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ModelConfigParser;
import io.strata.model.config.ReferenceModel;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.kv.KvCapacity;
import io.strata.platform.planner.CapacityPlanner;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What the Model page shows: the served model's config, its layer schedule, the KV layout it is paged
 * with, and capacity plans for it or for the real V4 configs, beside DeepSeek-V3.2.
 */
final class ModelReport {
    /** V3.2's trunk, as the seeds count it. */
    static final int V32_LAYERS = 61;

    private ModelReport() {
    }

    record Layer(int index, boolean mtp, String kind, String label) {
    }

    record Kind(String kind, String bucket, int layers, int groups, int entryBytes, int positionsPerPage,
                int entriesPerPage, int layerPageBytes, String window) {
    }

    record Bucket(String name, long pageBytes, Long pages, Long bytes) {
    }

    /** @param about what this model is: its training card, or that it is a random fixture, or nothing known */
    record Loaded(ModelCard card, ModelAbout about, ModelConfig config, String error, List<Layer> layers,
                  List<Kind> kinds, List<Bucket> buckets, String precision) {
    }

    /** The served model; {@code config} is null (and {@code error} set) when its config.json cannot be read. */
    static Loaded loaded(ModelCard card, Optional<KvCapacity> kv) {
        ModelAbout about = ModelAbout.of(Path.of(card.root()));
        ModelConfig config;
        try {
            config = ModelConfigParser.parse(Path.of(card.root()).resolve("config.json"));
        } catch (Exception e) {
            return new Loaded(card, about, null, "Cannot read " + card.root() + "/config.json: " + e.getMessage(), List.of(),
                    List.of(), List.of(), "");
        }
        KvLayout layout = kv.map(KvCapacity::layout)
                .orElseGet(() -> KvLayout.of(KvModelShape.of(card.id(), config), KvPrecision.DEFAULT));
        List<Layer> layers = new ArrayList<>();
        for (LayerSpec l : config.schedule().layers()) {
            String kind = switch (l.kind()) {
                case WINDOW_ONLY -> "window";
                case C4A -> "c4a";
                case C128A -> "c128a";
            };
            String label = (l.mtp() ? "MTP " + (l.index() - config.numHiddenLayers()) : "Layer " + l.index()) + ": "
                    + switch (l.kind()) {
                case WINDOW_ONLY -> "window only";
                case C4A -> "C4A (ratio 4, indexer)";
                case C128A -> "C128A (ratio 128)";
            };
            layers.add(new Layer(l.index(), l.mtp(), kind, label));
        }
        return new Loaded(card, about, config, null, layers, kinds(layout), buckets(layout, kv), layout.precision().toString());
    }

    static List<Kind> kinds(KvLayout layout) {
        List<Kind> out = new ArrayList<>();
        for (KindLayout k : layout.kinds()) {
            out.add(new Kind(k.kind().metricName(), k.bucket().metricName(), k.layers().size(), k.groups().size(),
                    k.format().entryBytes(), k.positionsPerPage(), k.entriesPerPage(), k.layerPageBytes(),
                    k.window() == null ? "grows with the sequence" : "window of " + k.window().size() + " positions"));
        }
        return out;
    }

    static List<Bucket> buckets(KvLayout layout, Optional<KvCapacity> kv) {
        List<Bucket> out = new ArrayList<>();
        for (BucketLayout b : layout.buckets()) {
            Long pages = kv.map(c -> c.pages(b.bucket())).orElse(null);
            out.add(new Bucket(b.bucket().metricName(), b.rowBytes(), pages, pages == null ? null : pages * b.rowBytes()));
        }
        return out;
    }

    /** A capacity plan and its comparison with DeepSeek-V3.2 at the same context and memory; {@code model} is the planned model's id. */
    record Plan(String model, long context, double memoryGib, long targetContext, CapacityPlanner.FitReport fit,
                CapacityPlanner.SequenceReport sequence, long v32Bytes, long v32Sequences, double v32Ratio,
                List<Kind> kinds) {
    }

    static Plan plan(String model, ModelConfig loadedConfig, String loadedId, long context, double memoryGib,
                     long targetContext) {
        if (context < 1 || context > (1L << 24)) {
            throw new IllegalArgumentException("context must be between 1 and 16777216 tokens, got " + context);
        }
        if (targetContext < 1 || targetContext > (1L << 24)) {
            throw new IllegalArgumentException("target context must be between 1 and 16777216 tokens, got " + targetContext);
        }
        if (!(memoryGib > 0) || memoryGib > 1_000_000) {
            throw new IllegalArgumentException("memory must be a positive number of GiB, got " + memoryGib);
        }
        KvLayout layout = switch (model == null ? "loaded" : model.toLowerCase(Locale.ROOT)) {
            case "loaded" -> {
                if (loadedConfig == null) {
                    throw new IllegalArgumentException("the served model's config could not be read; choose flash or pro");
                }
                yield KvLayout.of(KvModelShape.of(loadedId, loadedConfig), KvPrecision.DEFAULT);
            }
            case "flash" -> KvLayout.of(KvModelShape.of("deepseek-v4-flash", ReferenceModel.V4_FLASH.config()), KvPrecision.DEFAULT);
            case "pro" -> KvLayout.of(KvModelShape.of("deepseek-v4-pro", ReferenceModel.V4_PRO.config()), KvPrecision.DEFAULT);
            default -> throw new IllegalArgumentException("model must be loaded, flash or pro; got '" + model + "'");
        };
        long memory = (long) (memoryGib * CapacityPlanner.GIB);
        CapacityPlanner.FitReport fit = CapacityPlanner.fit(layout, context, memory, targetContext);
        CapacityPlanner.SequenceReport seq = CapacityPlanner.sequence(layout, context);
        long v32 = CapacityPlanner.v32Bytes(context, V32_LAYERS);
        long perSeq = Math.max(1, seq.pagedTotalBytes());
        return new Plan(layout.shape().modelId(), context, memoryGib, targetContext, fit, seq, v32, memory / v32,
                (double) v32 / perSeq, kinds(layout));
    }
}
