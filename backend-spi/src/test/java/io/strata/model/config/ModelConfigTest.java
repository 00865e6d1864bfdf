package io.strata.model.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import io.strata.model.TestModels;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

class ModelConfigTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void flashParsesWithEveryKeyOfTheRelease() {
        ModelConfig c = ReferenceModel.V4_FLASH.config();
        assertThat(c.modelType()).isEqualTo("deepseek_v4");
        assertThat(c.architectures()).containsExactly("DeepseekV4ForCausalLM");
        assertThat(c.vocabSize()).isEqualTo(129280);
        assertThat(c.hiddenSize()).isEqualTo(4096);
        assertThat(c.numHiddenLayers()).isEqualTo(43);
        assertThat(c.numNextnPredictLayers()).isEqualTo(1);
        assertThat(c.attention()).isEqualTo(new AttentionConfig(64, 1, 512, 64, 1024, 8, 1024, 128, false, 0.0));
        assertThat(c.attention().noRopeHeadDim()).isEqualTo(448);
        assertThat(c.attention().oGroupInputDim()).isEqualTo(4096);
        assertThat(c.compressRatios()).hasSize(44).startsWith(0, 0, 4, 128).endsWith(128, 4, 0);
        assertThat(c.compressRopeTheta()).isEqualTo(160000.0);
        assertThat(c.ropeTheta()).isEqualTo(10000.0);
        assertThat(c.ropeScaling()).contains(new YarnScaling("yarn", 16, 65536, 32, 1));
        assertThat(c.maxPositionEmbeddings()).isEqualTo(1048576L);
        assertThat(c.indexer()).isEqualTo(new IndexerConfig(64, 128, 512));
        assertThat(c.moe()).isEqualTo(new MoeConfig(256, 6, 1, 2048, 3, "sqrtsoftplus", "noaux_tc", true, 1.5, 10.0,
                "silu"));
        assertThat(c.hyperConnections()).isEqualTo(new HyperConnectionConfig(4, 20, 1e-6));
        assertThat(c.hyperConnections().mixCount()).isEqualTo(24);
        assertThat(c.rmsNormEps()).isEqualTo(1e-6);
        assertThat(c.expertDtype()).isEqualTo(ExpertDtype.FP4);
        assertThat(c.quantization()).contains(new QuantizationConfig("fp8", "e4m3", "ue8m0", 128, 128, "dynamic"));
        assertThat(c.tieWordEmbeddings()).isFalse();
        assertThat(c.bosTokenId()).isZero();
        assertThat(c.eosTokenId()).isEqualTo(1);
        assertThat(c.torchDtype()).isEqualTo("bfloat16");
        assertThat(c.transformersVersion()).contains("4.57.1");
        assertThat(c.useCache()).isTrue();
        assertThat(c.initializerRange()).isEqualTo(0.02);
    }

    @Test
    void proDiffersWhereTheReleaseDiffers() {
        ModelConfig c = ReferenceModel.V4_PRO.config();
        assertThat(c.hiddenSize()).isEqualTo(7168);
        assertThat(c.numHiddenLayers()).isEqualTo(61);
        assertThat(c.attention()).isEqualTo(new AttentionConfig(128, 1, 512, 64, 1536, 16, 1024, 128, false, 0.0));
        assertThat(c.compressRatios()).hasSize(62).startsWith(128, 128, 4, 128).endsWith(4, 0);
        assertThat(c.indexer().topk()).isEqualTo(1024);
        assertThat(c.moe().numRoutedExperts()).isEqualTo(384);
        assertThat(c.moe().intermediateSize()).isEqualTo(3072);
        assertThat(c.moe().routedScalingFactor()).isEqualTo(2.5);
    }

    @Test
    void flashScheduleMatchesTheRelease() {
        LayerSchedule s = ReferenceModel.V4_FLASH.config().schedule();
        assertThat(s.size()).isEqualTo(44);
        assertThat(s.trunk()).hasSize(43);
        assertThat(s.mtp()).singleElement().satisfies(l -> {
            assertThat(l.index()).isEqualTo(43);
            assertThat(l.kind()).isEqualTo(LayerKind.WINDOW_ONLY);
            assertThat(l.hashRouted()).isFalse();
            assertThat(l.weightPrefix()).isEqualTo("mtp.0.");
            assertThat(l.rope().theta()).isEqualTo(10000.0);
            assertThat(l.rope().yarn()).isEmpty();
        });
        assertThat(s.indicesOf(LayerKind.WINDOW_ONLY)).containsExactly(0, 1, 43);
        assertThat(s.indicesOf(LayerKind.C4A)).isEqualTo(IntStream.rangeClosed(1, 21).map(i -> 2 * i).boxed().toList());
        assertThat(s.indicesOf(LayerKind.C128A)).isEqualTo(IntStream.rangeClosed(1, 20).map(i -> 2 * i + 1).boxed().toList());
        assertThat(s.layers().stream().filter(LayerSpec::hashRouted).map(LayerSpec::index)).containsExactly(0, 1, 2);
        assertThat(s.layer(7).weightPrefix()).isEqualTo("layers.7.");
    }

    @Test
    void proScheduleStartsWithTwoC128aLayers() {
        LayerSchedule s = ReferenceModel.V4_PRO.config().schedule();
        assertThat(s.indicesOf(LayerKind.WINDOW_ONLY)).containsExactly(61);
        assertThat(s.indicesOf(LayerKind.C4A)).hasSize(30).startsWith(2, 4).endsWith(60);
        List<Integer> hca = s.indicesOf(LayerKind.C128A);
        assertThat(hca).hasSize(31).startsWith(0, 1, 3, 5).endsWith(59);
        assertThat(s.layers().stream().filter(LayerSpec::hashRouted).map(LayerSpec::index)).containsExactly(0, 1, 2);
    }

    @Test
    void compressedLayersUseCompressThetaWithYarnAndWindowLayersDoNot() {
        LayerSchedule s = ReferenceModel.V4_FLASH.config().schedule();
        RopeConfig window = s.layer(0).rope();
        RopeConfig c4 = s.layer(2).rope();
        RopeConfig c128 = s.layer(3).rope();
        assertThat(window.theta()).isEqualTo(10000.0);
        assertThat(window.yarn()).isEmpty();
        assertThat(c4).isEqualTo(c128);
        assertThat(c4.theta()).isEqualTo(160000.0);
        assertThat(c4.yarn()).isPresent();
        assertThat(c4.dim()).isEqualTo(64);
        assertThat(c4.yarnCorrectionRange()).containsExactly(15, 25);
    }

    @Test
    void yarnFrequenciesKeepHighPairsScaleLowPairsAndRampBetween() {
        RopeConfig rope = ReferenceModel.V4_FLASH.config().schedule().layer(2).rope();
        float[] f = rope.inverseFrequencies();
        assertThat(f).hasSize(32);
        for (int i = 0; i < 32; i++) {
            double plain = 1.0 / Math.pow(160000, 2.0 * i / 64);
            double ramp = Math.clamp((i - 15) / 10.0, 0, 1);
            double expected = plain / 16 * ramp + plain * (1 - ramp);
            assertThat((double) f[i]).as("pair %d", i).isCloseTo(expected, within(expected * 1e-6));
        }
        assertThat(f[0]).isEqualTo(1.0f);
        float[] window = ReferenceModel.V4_FLASH.config().schedule().layer(0).rope().inverseFrequencies();
        assertThat((double) window[31]).isCloseTo(1.0 / Math.pow(10000, 62.0 / 64), within(1e-10));
        assertThat(RopeConfig.angle(window, 3, 0)).isEqualTo(3.0f);
    }

    @Test
    void bothFixturesParseWithTheirSchedules() throws Exception {
        ModelConfig fp8 = ModelConfig.parse(TestModels.fp8().resolve("config.json"));
        ModelConfig stable = ModelConfig.parse(TestModels.stable().resolve("config.json"));
        assertThat(fp8.quantized()).isTrue();
        assertThat(fp8.expertDtype()).isEqualTo(ExpertDtype.FP4);
        assertThat(stable.quantized()).isFalse();
        assertThat(stable.expertDtype()).isEqualTo(ExpertDtype.BF16);
        assertThat(stable.transformersVersion()).isEmpty();
        for (ModelConfig c : List.of(fp8, stable)) {
            LayerSchedule s = c.schedule();
            assertThat(s.indicesOf(LayerKind.WINDOW_ONLY)).containsExactly(0, 6);
            assertThat(s.indicesOf(LayerKind.C4A)).containsExactly(1, 3, 5);
            assertThat(s.indicesOf(LayerKind.C128A)).containsExactly(2, 4);
            assertThat(s.layers().stream().filter(LayerSpec::hashRouted).map(LayerSpec::index)).containsExactly(0, 1);
        }
    }

    @Test
    void missingKeyIsNamed() {
        assertRejected(c -> c.remove("hidden_size"), "hidden_size", "is required");
    }

    @Test
    void compressRatiosOfTheWrongLengthAreRejected() {
        assertRejected(c -> ((ArrayNode) c.get("compress_ratios")).remove(43), "compress_ratios",
                "num_hidden_layers + num_nextn_predict_layers = 44");
    }

    @Test
    void unknownRatioIsRejected() {
        assertRejected(c -> ((ArrayNode) c.get("compress_ratios")).set(5, 16), "compress_ratios[5]",
                "must be 0 (window only), 4 (C4A) or 128 (C128A), got 16");
    }

    @Test
    void dimensionsFp8BlocksCannotTakeAreRejected() {
        assertRejected(c -> c.put("q_lora_rank", 1000), "q_lora_rank", "multiple of 128");
        assertRejected(c -> c.put("moe_intermediate_size", 2000), "moe_intermediate_size", "multiple of 128");
        assertRejected(c -> ((ObjectNode) c.get("quantization_config")).putArray("weight_block_size").add(64).add(64),
                "quantization_config.weight_block_size", "[128, 128]");
    }

    @Test
    void unquantizedConfigMayUseOddWidths() {
        ObjectNode c = flashJson();
        c.remove("quantization_config");
        c.remove("expert_dtype");
        c.put("q_lora_rank", 1000);
        ModelConfig parsed = ModelConfig.parse(JSON.writeValueAsString(c), "test");
        assertThat(parsed.quantized()).isFalse();
        assertThat(parsed.expertDtype()).isEqualTo(ExpertDtype.BF16);
    }

    @Test
    void otherRulesNameTheirKeys() {
        assertRejected(c -> c.put("model_type", "deepseek_v3"), "model_type", "deepseek_v4");
        assertRejected(c -> c.put("num_key_value_heads", 8), "num_key_value_heads", "must be 1");
        assertRejected(c -> c.put("qk_rope_head_dim", 96), "head_dim", "multiple of 64");
        assertRejected(c -> c.put("index_head_dim", 96), "index_head_dim", "power of two");
        assertRejected(c -> c.put("num_experts_per_tok", 300), "num_experts_per_tok", "1..n_routed_experts");
        assertRejected(c -> c.put("expert_dtype", "int4"), "expert_dtype", "\"fp4\" or \"fp8\"");
        assertRejected(c -> ((ObjectNode) c.get("rope_scaling")).put("type", "linear"), "rope_scaling.type", "yarn");
        assertRejected(c -> c.put("hidden_size", "4096"), "hidden_size", "must be an integer");
        assertRejected(c -> c.put("tie_word_embeddings", true), "tie_word_embeddings", "must be false");
        assertRejected(c -> c.put("scoring_func", "relu"), "scoring_func", "one of");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        ObjectNode c = flashJson();
        c.remove("vocab_size");
        c.remove("hc_mult");
        c.put("head_dim", "wide");
        assertThatThrownBy(() -> ModelConfig.parse(JSON.writeValueAsString(c), "broken.json"))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> {
                    assertThat(e.source()).isEqualTo("broken.json");
                    assertThat(e.violations()).extracting(ConfigViolation::key)
                            .containsExactlyInAnyOrder("vocab_size", "hc_mult", "head_dim");
                    assertThat(e.getMessage()).contains("broken.json", "3 problem(s)", "'vocab_size': is required");
                });
    }

    @Test
    void malformedJsonIsReadable() {
        assertThatThrownBy(() -> ModelConfig.parse("{\"vocab_size\": 12,", "cut.json"))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("cut.json")
                .hasMessageContaining("must be valid JSON");
        assertThatThrownBy(() -> ModelConfig.parse("[1,2]", "array.json"))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("must be a JSON object");
    }

    private static ObjectNode flashJson() {
        try (var in = ModelConfigTest.class.getClassLoader().getResourceAsStream(
                ReferenceModel.V4_FLASH.resourcePath())) {
            return (ObjectNode) JSON.readTree(in);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void assertRejected(Consumer<ObjectNode> mutation, String key, String ruleFragment) {
        ObjectNode c = flashJson();
        mutation.accept(c);
        assertThatThrownBy(() -> ModelConfig.parse(JSON.writeValueAsString(c), "mutated.json"))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.violations())
                        .anySatisfy(v -> {
                            assertThat(v.key()).isEqualTo(key);
                            assertThat(v.rule()).contains(ruleFragment);
                        }));
    }
}
