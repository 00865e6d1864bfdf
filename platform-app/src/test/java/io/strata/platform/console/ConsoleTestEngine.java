package io.strata.platform.console;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ModelConfigParser;
import io.strata.platform.engine.EngineProperties;
import io.strata.platform.engine.ModelCard;
import io.strata.platform.engine.ScriptedStepRunner;
import io.strata.platform.engine.ServingEngine;
import io.strata.platform.engine.TokenizerCodec;
import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvPoolSizes;
import io.strata.platform.tokenizer.ModelTokenizer;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The real engine loop, scheduler, sampler and tokenizer over the real hybrid KV cache manager (the tiny
 * model's layout: 3 C4A + 2 C128A + 2 window-only layers incl. MTP), with a scripted model that takes
 * {@link #STEP_MILLIS} per step so requests stay visible in the console for a few seconds. Pools hold
 * about {@link #POOL_REQUESTS} requests of {@link #POOL_CONTEXT} tokens, so a small load moves the bars.
 */
@TestConfiguration
public class ConsoleTestEngine {
    static final int MAX_MODEL_LEN = 2048;
    static final int POOL_CONTEXT = 1024;
    static final int POOL_REQUESTS = 12;
    static final long STEP_MILLIS = 40;

    static Path modelDir() {
        return Path.of(System.getProperty("strata.models.dir", "../models"), "dsv4-tiny-stable");
    }

    @Bean
    ModelTokenizer consoleTestTokenizer() {
        return ModelTokenizer.load(modelDir());
    }

    static KvCacheManager kvManager() throws IOException {
        ModelConfig config = ModelConfigParser.parse(modelDir().resolve("config.json"));
        KvLayout layout = KvLayout.of(KvModelShape.of("dsv4-tiny-stable", config), KvPrecision.DEFAULT);
        long[] d = KvPoolSizes.demand(layout, POOL_CONTEXT);
        return new KvCacheManager(layout, new KvPoolSizes((int) (d[0] * POOL_REQUESTS), (int) (d[1] * POOL_REQUESTS),
                (int) (d[2] * POOL_REQUESTS)), true);
    }

    @Bean
    ScriptedStepRunner consoleTestExecutor(ModelTokenizer tokenizer) {
        ScriptedStepRunner executor = new ScriptedStepRunner(1024, 14, tokenizer.specialTokens().eos());
        executor.stepDelay(STEP_MILLIS);
        return executor;
    }

    /**
     * Primary over the application's own engine bean, which the console tests keep offline
     * ({@code strata.model.path} pointing nowhere, {@code on-load-failure=console-only}) so the CPU plugin in
     * the test's plugins folder is shown on the Plugins page without a second engine loading the model.
     */
    @Bean(destroyMethod = "close")
    @Primary
    ServingEngine consoleTestEngine(ModelTokenizer tokenizer, ScriptedStepRunner executor, MeterRegistry registry,
                                    EngineProperties props) throws IOException {
        // the application's limits, as the production engine takes them (the Settings page shows these)
        return new ServingEngine(new ModelCard("dsv4-tiny-stable", modelDir().toString(), MAX_MODEL_LEN, 1024,
                1_700_000_000L), new TokenizerCodec(tokenizer), props, kvManager(), executor, registry, () -> { });
    }
}
