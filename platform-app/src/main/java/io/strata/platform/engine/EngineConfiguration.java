package io.strata.platform.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.model.ModelLoader;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.platform.plugins.LoadedBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.tokenizer.ModelTokenizer;
import io.strata.spi.exec.ExecutionBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.file.Path;
import java.util.List;

/**
 * Loads the served model at start and builds the engine. A checkpoint that cannot be loaded stops
 * start-up with the loader's message, unless {@code strata.model.on-load-failure=console-only}. Without
 * an execution backend (no plugin offers one, or all are disabled) the app starts with the engine
 * offline and the reason on /health.
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
                                    PluginHost plugins, MeterRegistry registry, ServingBackend serving,
                                    @Value("${strata.models.dir:}") String modelsDir) {
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
        List<LoadedBackend> backends = plugins.availableBackends().stream()
                .filter(b -> b.provider() instanceof ExecutionBackend).toList();
        if (backends.isEmpty()) {
            String reason = "no execution backend available: no started plugin offers one (see /admin/plugins)";
            log.warn("Engine offline: {}", reason);
            return new OfflineEngine(model.card(), codec, reason);
        }
        LoadedBackend backend = backends.getFirst();
        try {
            InferenceEngine engine = EngineAssembly.start(model, codec, backend, engineProps, kvProps, registry);
            serving.chose(backend.pluginId());
            return engine;
        } catch (RuntimeException e) {
            String reason = "backend '" + backend.pluginId() + "' could not load the model: " + e.getMessage();
            if (!modelProps.consoleOnlyOnFailure()) {
                throw new ModelLoadException(reason, e);
            }
            log.error("Engine offline: {}", reason, e);
            return new OfflineEngine(model.card(), codec, reason);
        }
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
