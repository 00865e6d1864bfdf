package io.strata.platform.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.model.ModelLoader;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.platform.plugins.BackendReport;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginView;
import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.platform.workers.WorkerProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Loads the served model at start and builds the engine. A checkpoint that cannot be loaded stops
 * start-up with the loader's message, unless {@code strata.model.on-load-failure=console-only}. The backend
 * is chosen by {@link BackendChoice} ({@code strata.backend}, else the highest priority). Without an
 * execution backend (no plugin offers one, all are disabled, the named one is not available) or when no
 * backend can load the model, the app starts with the engine offline and the reason on /health.
 */
@Configuration
public class EngineConfiguration {
    private static final Logger log = LoggerFactory.getLogger(EngineConfiguration.class);

    /** What was loaded from the checkpoint directory: the validated weights, the tokenizer and the served card. */
    record ServedModel(Path dir, io.strata.model.LoadedModel weights, ModelTokenizer tokenizer, ModelCard card) {
        ModelConfig config() {
            return weights.config();
        }

        Checkpoint checkpoint() {
            return weights.checkpoint();
        }
    }

    @Bean(destroyMethod = "close")
    InferenceEngine inferenceEngine(ModelProperties modelProps, EngineProperties engineProps, KvProperties kvProps,
                                    DataParallelProperties dataParallel, SamplingProperties sampling,
                                    PluginHost plugins, MeterRegistry registry,
                                    ServingBackend serving, Environment env,
                                    @Value("${strata.models.dir:}") String modelsDir, WorkerProperties workerProps) {
        Path dir = ModelDirectory.resolve(modelProps.path(), modelsDir);
        ServedModel model;
        try {
            model = load(dir, modelProps);
        } catch (ModelLoadException e) {
            if (!modelProps.consoleOnlyOnFailure()) {
                throw e;
            }
            log.error("Model not loaded, starting the console only: {}", e.getMessage());
            return new OfflineEngine(new ModelCard(dir.getFileName().toString(), dir.toString(), 0, 0,
                    System.currentTimeMillis() / 1000), null, e.getMessage());
        }
        TokenizerCodec codec = new TokenizerCodec(model.tokenizer());
        BackendChoice choice = BackendChoice.of(plugins.availableBackends(), BackendSettings.requested(env),
                unavailable(plugins.plugins()));
        return startOnBackend(model, codec, choice, env, engineProps, kvProps, registry, serving,
                dataParallel.dataParallelSize(), new EngineAssembly.Workers(workerProps, plugins::pluginJar), sampling);
    }

    /** Installed plugins that cannot serve here, with why: not started, or no backend whose probe said available. */
    private static Map<String, String> unavailable(List<PluginView> plugins) {
        Map<String, String> out = new HashMap<>();
        for (PluginView p : plugins) {
            if (!"STARTED".equals(p.state())) {
                out.put(p.pluginId(), p.state() + (p.reason().isEmpty() ? "" : ": " + p.reason()));
            } else if (p.backends().stream().noneMatch(BackendReport::available)) {
                out.put(p.pluginId(), p.backends().stream()
                        .map(b -> b.probe() != null ? b.probe().reason() : b.error())
                        .filter(r -> r != null && !r.isBlank())
                        .collect(Collectors.joining("; ")));
            }
        }
        return out;
    }

    /**
     * Starts the engine on the chosen backend ({@link BackendChoice}). A backend that cannot load the model
     * (out of device memory, unsupported format) is expected on a mixed fleet: when {@code strata.backend} is
     * unset the next one by priority is tried, with one WARN line saying why; when it is set, or none is left,
     * the engine stays offline with the reason, and the console, /health and the tokenizer keep working.
     */
    static InferenceEngine startOnBackend(ServedModel model, TokenizerCodec codec, BackendChoice choice,
                                          Environment env, EngineProperties engineProps, KvProperties kvProps,
                                          MeterRegistry registry, ServingBackend serving) {
        return startOnBackend(model, codec, choice, env, engineProps, kvProps, registry, serving, 1,
                EngineAssembly.Workers.IN_PROCESS, SamplingProperties.defaults());
    }

    /**
     * Like the single-engine form, with {@code ranks} data-parallel ranks on the backend that loads the model, each
     * in a worker process of its own when {@code workers} says so; a worker that cannot start counts as a backend
     * that cannot load the model (same fallback, same offline reason).
     *
     * @param sampling how many threads each rank samples its steps' rows on
     */
    static InferenceEngine startOnBackend(ServedModel model, TokenizerCodec codec, BackendChoice choice,
                                          Environment env, EngineProperties engineProps, KvProperties kvProps,
                                          MeterRegistry registry, ServingBackend serving, int ranks,
                                          EngineAssembly.Workers workers, SamplingProperties sampling) {
        if (choice.offlineReason() != null) {
            log.warn("Engine offline: {}", choice.offlineReason());
            return new OfflineEngine(model.card(), codec, choice.offlineReason());
        }
        List<ServingBackend.Skipped> skipped = new ArrayList<>();
        List<LoadedBackend> candidates = choice.candidates();
        for (int i = 0; i < candidates.size(); i++) {
            LoadedBackend backend = candidates.get(i);
            try {
                InferenceEngine engine = EngineAssembly.start(model, codec, backend, engineProps, kvProps,
                        BackendSettings.of(env, backend.pluginId()), registry, serving, ranks, workers, sampling);
                serving.skipped(skipped);
                return engine;
            } catch (RuntimeException | LinkageError e) {
                // LinkageError: a native library of the backend missing on this host (UnsatisfiedLinkError)
                String reason = "backend '" + backend.pluginId() + "' could not load the model: " + describe(e);
                log.debug("Backend '{}' failed to load the model", backend.pluginId(), e);
                skipped.add(new ServingBackend.Skipped(backend.pluginId(), reason));
                serving.skipped(skipped);
                if (choice.explicit() || i == candidates.size() - 1) {
                    String offline = choice.explicit()
                            ? reason + " (strata.backend=" + backend.pluginId() + ")"
                            : skipped.size() == 1 ? reason
                            : "no backend could load the model: " + skipped.stream().map(ServingBackend.Skipped::reason)
                            .collect(Collectors.joining("; "));
                    log.warn("Engine offline: {}", offline);
                    return new OfflineEngine(model.card(), codec, offline);
                }
                log.warn("{}; falling back to backend '{}' (set strata.backend to insist on one)", reason,
                        candidates.get(i + 1).pluginId());
            }
        }
        throw new IllegalStateException("unreachable: no backend candidates");
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getName() : message;
    }

    /**
     * Opens the directory through {@link ModelLoader}, which validates config.json and checks every tensor
     * against the config's catalogue (all missing, unexpected and mismatched tensors in one message), then
     * loads the tokenizer and fixes the served context length.
     */
    static ServedModel load(Path dir, ModelProperties props) {
        io.strata.model.LoadedModel weights;
        try {
            weights = ModelLoader.load(dir);
        } catch (RuntimeException e) {
            throw new ModelLoadException("Cannot load model " + dir + ": " + e.getMessage(), e);
        }
        try {
            ModelTokenizer tokenizer;
            try {
                tokenizer = ModelTokenizer.load(dir);
            } catch (RuntimeException e) {
                throw new ModelLoadException("Cannot load model " + dir + ": tokenizer: " + e.getMessage(), e);
            }
            ModelConfig config = weights.config();
            long maxPos = config.maxPositionEmbeddings();
            int maxModelLen = props.maxModelLen() != null ? props.maxModelLen() : (int) Math.min(maxPos, 8192);
            if (maxModelLen > maxPos) {
                throw new ModelLoadException("strata.model.max-model-len=" + maxModelLen + " exceeds the model's "
                        + "max_position_embeddings=" + maxPos, null);
            }
            ModelCard card = new ModelCard(dir.getFileName().toString(), dir.toString(), maxModelLen,
                    config.vocabSize(), System.currentTimeMillis() / 1000);
            log.info("Loaded model {} from {} ({} tensors, vocab {}, max_model_len {})", card.id(), dir,
                    weights.checkpoint().size(), config.vocabSize(), maxModelLen);
            return new ServedModel(dir, weights, tokenizer, card);
        } catch (RuntimeException e) {
            weights.close();
            throw e;
        }
    }
}
