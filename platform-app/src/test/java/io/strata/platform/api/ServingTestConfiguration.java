package io.strata.platform.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.platform.engine.EngineProperties;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.ScriptedExecutor;
import io.strata.platform.engine.ServingEngine;
import io.strata.platform.engine.TestPagedKvCache;
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
    public static final int PAGE_TOKENS = 16;
    public static final int PAGES = 64;
    public static final int MAX_MODEL_LEN = 512;

    @Bean
    ModelTokenizer testTokenizer() {
        return ModelTokenizer.load(Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable"));
    }

    @Bean
    TestPagedKvCache testKv() {
        return new TestPagedKvCache(PAGE_TOKENS, PAGES);
    }

    @Bean
    ScriptedExecutor scriptedExecutor(ModelTokenizer tokenizer) {
        return new ScriptedExecutor(1024, 14, tokenizer.specialTokens().eos());
    }

    @Bean(destroyMethod = "close")
    @Primary
    ServingEngine testEngine(ModelTokenizer tokenizer, TestPagedKvCache kv, ScriptedExecutor executor, MeterRegistry registry) {
        EngineProperties props = new EngineProperties(64, 8, 6, 4000L, "fcfs");
        return new ServingEngine(new ModelCard("dsv4-tiny-stable", "models/dsv4-tiny-stable", MAX_MODEL_LEN, 1024,
                1_700_000_000L), new TokenizerCodec(tokenizer), props, kv, executor, registry);
    }
}
