package io.strata.platform.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.engine.EngineProperties;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.ScriptedStepRunner;
import io.strata.platform.engine.ServingEngine;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ModelConfigParser;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.engine.TokenizerCodec;
import io.strata.platform.tokenizer.ModelTokenizer;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

import java.nio.file.Path;

/**
 * The real engine loop, scheduler, sampler, tokenizer and chat encoding, over a scripted model and a
 * small paged KV cache, for API contract tests that need exact control (failures, slow steps, tiny
 * pools). End-to-end tests against the CPU backend use the production wiring instead.
 */
@TestConfiguration
public class ServingTestConfiguration {
    public static final int MAX_MODEL_LEN = 1024;
    /** Pools hold this many sequences of MAX_MODEL_LEN tokens at once. */
    public static final int FULL_SEQUENCES = 3;

    static Path modelDir() {
        return Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
    }

    @Bean
    ModelTokenizer testTokenizer() {
        return ModelTokenizer.load(modelDir());
    }

    @Bean
    KvCacheManager testKv() throws java.io.IOException {
        ModelConfig config = ModelConfigParser.parse(modelDir().resolve("config.json"));
        KvLayout layout = KvLayout.of(KvModelShape.of("dsv4-tiny-stable", config), KvPrecision.DEFAULT);
        long[] d = KvPoolSizes.demand(layout, MAX_MODEL_LEN);
        KvPoolSizes sizes = new KvPoolSizes((int) d[0] * FULL_SEQUENCES, (int) d[1] * FULL_SEQUENCES, (int) d[2] * FULL_SEQUENCES);
        return new KvCacheManager(layout, sizes, true);
    }

    @Bean
    ScriptedStepRunner scriptedExecutor(ModelTokenizer tokenizer) {
        return new ScriptedStepRunner(1024, 14, tokenizer.specialTokens().eos());
    }

    @Bean(destroyMethod = "close")
    @Primary
    ServingEngine testEngine(ModelTokenizer tokenizer, KvCacheManager kv, ScriptedStepRunner executor, MeterRegistry registry) {
        EngineProperties props = new EngineProperties(64, 8, 6, 4000L, "fcfs");
        return new ServingEngine(new ModelCard("dsv4-tiny-stable", "models/dsv4-tiny-stable", MAX_MODEL_LEN, 1024,
                1_700_000_000L), new TokenizerCodec(tokenizer), props, kv, executor, registry, () -> { });
    }
}
