package io.strata.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

import io.strata.model.catalogue.CatalogueProblem;
import io.strata.model.catalogue.CheckpointValidationException;
import io.strata.model.catalogue.ProblemKind;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.CheckpointException;
import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.checkpoint.SafetensorsWriter;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.InvalidConfigException;
import io.strata.model.config.LayerKind;
import io.strata.model.weights.WeightMatrix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelLoaderTest {

    private static final String SHARD1 = "model-00001-of-00002.safetensors";
    private static final String SHARD2 = "model-00002-of-00002.safetensors";

    @TempDir
    Path tmp;

    @Test
    void loadsTheFp8FixtureWithConfigScheduleAndTypedTensors() {
        Tensor sink;
        try (LoadedModel m = ModelLoader.load(TestModels.fp8())) {
            assertThat(m.config().hiddenSize()).isEqualTo(256);
            assertThat(m.schedule().layer(1).kind()).isEqualTo(LayerKind.C4A);
            assertThat(m.validation().isClean()).isTrue();
            assertThat(m.checkpoint().size()).isEqualTo(596);

            LayerWeights l1 = m.layer(1);
            assertThat(l1.linear("attn.wq_a")).isInstanceOf(WeightMatrix.Fp8Blocks.class);
            assertThat(l1.linear("attn.indexer.wq_b").rows()).isEqualTo(1024);
            assertThat(l1.expert(3, "w2")).isInstanceOf(WeightMatrix.Fp4Groups.class);
            assertThat(l1.expert(3, "w2").cols()).isEqualTo(128);
            assertThat(l1.tensor("attn.compressor.ape").hasShape(4, 1024)).isTrue();
            assertThat(m.layer(6).spec().mtp()).isTrue();
            assertThat(m.layer(6).tensor("e_proj.weight").dtype()).isEqualTo(DType.F8_E4M3);
            assertThat(m.layer(0).tensor("ffn.gate.tid2eid").toLongArray()).startsWith(2, 6, 6, 2, 0, 7);
            sink = m.layer(0).tensor("attn.attn_sink");
            assertThat(sink.f32(0)).isFinite();
        }
        assertThatThrownBy(() -> sink.f32(0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void loadsTheStableFixture() {
        try (LoadedModel m = ModelLoader.load(TestModels.stable())) {
            assertThat(m.config().quantized()).isFalse();
            assertThat(m.layer(2).linear("ffn.experts.7.w1")).isInstanceOf(WeightMatrix.Plain.class);
            assertThat(m.linear("layers.4.attn.wo_b").cols()).isEqualTo(256);
            assertThat(m.tensor("embed.weight").rows()).isEqualTo(1024);
        }
    }

    @Test
    void aRemovedTensorIsNamed() throws IOException {
        Path dir = copyFixture(TestModels.fp8());
        rewriteShard(dir, SHARD1, "layers.1.attn.compressor.ape", null);
        assertThatThrownBy(() -> ModelLoader.load(dir)).isInstanceOfSatisfying(CheckpointValidationException.class, e -> {
            assertThat(e.report().problems()).containsExactly(new CatalogueProblem(ProblemKind.MISSING,
                    "layers.1.attn.compressor.ape", "F32[4, 1024]", "", ""));
            assertThat(e.getMessage()).contains("missing layers.1.attn.compressor.ape");
        });
    }

    @Test
    void aReshapedTensorIsNamed() throws IOException {
        Path dir = copyFixture(TestModels.stable());
        String victim = "layers.3.attn.attn_sink";
        rewriteShard(dir, shardOf(dir, victim), victim, t -> new Replacement(DType.F32, new int[] {2, 2}));
        assertThatThrownBy(() -> ModelLoader.load(dir)).isInstanceOfSatisfying(CheckpointValidationException.class,
                e -> {
                    assertThat(e.report().problems()).singleElement().satisfies(p -> {
                        assertThat(p.kind()).isEqualTo(ProblemKind.WRONG_SHAPE);
                        assertThat(p.tensor()).isEqualTo(victim);
                        assertThat(p.expected()).isEqualTo("F32[4]");
                        assertThat(p.actual()).isEqualTo("F32[2, 2]");
                    });
                    assertThat(e.getMessage()).contains("wrong shape for " + victim);
                });
    }

    @Test
    void everyProblemIsReportedAtOnce() throws IOException {
        Path dir = copyFixture(TestModels.fp8());
        rewriteShard(dir, shardOf(dir, "mtp.0.enorm.weight"), "mtp.0.enorm.weight", null);
        String retyped = "layers.2.ffn.gate.bias";
        rewriteShard(dir, shardOf(dir, retyped), retyped, t -> new Replacement(DType.I32, new int[] {8}));
        // an extra tensor the config does not call for
        Path extra = dir.resolve("model-00003-of-00003.safetensors");
        new SafetensorsWriter().addF32("layers.2.ffn.gate.bias_extra", new int[] {1}, 1f).write(extra);
        updateIndex(dir, json -> json.replace("\"weight_map\": {",
                "\"weight_map\": {\n  \"layers.2.ffn.gate.bias_extra\": \"model-00003-of-00003.safetensors\","));

        assertThatThrownBy(() -> ModelLoader.load(dir)).isInstanceOfSatisfying(CheckpointValidationException.class, e -> {
            assertThat(e.report().problems()).extracting(CatalogueProblem::kind, CatalogueProblem::tensor)
                    .containsExactlyInAnyOrder(
                            org.assertj.core.groups.Tuple.tuple(ProblemKind.MISSING, "mtp.0.enorm.weight"),
                            org.assertj.core.groups.Tuple.tuple(ProblemKind.WRONG_DTYPE, retyped),
                            org.assertj.core.groups.Tuple.tuple(ProblemKind.UNEXPECTED, "layers.2.ffn.gate.bias_extra"));
            assertThat(e.getMessage()).contains("1 missing", "1 unexpected", "1 wrong dtype");
        });
    }

    @Test
    void aBrokenConfigIsReportedBeforeAnyWeightIsMapped() throws IOException {
        Path dir = copyFixture(TestModels.stable());
        Path cfg = dir.resolve("config.json");
        Files.writeString(cfg, Files.readString(cfg).replace("\"compress_ratios\": [\n  0,", "\"compress_ratios\": [\n  2,"));
        assertThatThrownBy(() -> ModelLoader.load(dir)).isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("compress_ratios[0]");
        Files.delete(cfg);
        assertThatThrownBy(() -> ModelLoader.load(dir)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining("config.json");
    }

    // ---- helpers that build tampered copies of a fixture ----------------------------------------------

    private record Replacement(DType dtype, int[] shape) {
    }

    private Path copyFixture(Path src) throws IOException {
        Path dir = tmp.resolve(src.getFileName());
        Files.createDirectories(dir);
        for (String f : new String[] {"config.json", Checkpoint.INDEX_FILE, SHARD1, SHARD2}) {
            Files.copy(src.resolve(f), dir.resolve(f));
        }
        return dir;
    }

    private static String shardOf(Path dir, String tensor) {
        try (Checkpoint c = Checkpoint.open(dir)) {
            return Path.of(c.tensor(tensor).file()).getFileName().toString();
        }
    }

    /** Rewrites one shard without {@code victim} (replace == null) or with it re-declared. */
    private static void rewriteShard(Path dir, String shard, String victim, UnaryOperator<Replacement> replace)
            throws IOException {
        Path file = dir.resolve(shard);
        SafetensorsWriter w = new SafetensorsWriter();
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            for (Tensor t : f.tensors().values()) {
                if (!t.name().equals(victim)) {
                    w.add(t);
                } else if (replace != null) {
                    Replacement r = replace.apply(new Replacement(t.dtype(), t.shape()));
                    long n = r.dtype().byteSize();
                    for (int d : r.shape()) {
                        n *= d;
                    }
                    w.add(victim, r.dtype(), r.shape(), new byte[(int) n]);
                }
            }
        }
        Path rewritten = dir.resolve(shard + ".tmp");
        w.write(rewritten);
        Files.move(rewritten, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        if (replace == null) {
            updateIndex(dir, json -> json.replaceAll("\\n\\s*\"" + java.util.regex.Pattern.quote(victim)
                    + "\": \"[^\"]+\",?", ""));
        }
    }

    private static void updateIndex(Path dir, UnaryOperator<String> edit) throws IOException {
        Path index = dir.resolve(Checkpoint.INDEX_FILE);
        Files.writeString(index, edit.apply(Files.readString(index)));
    }
}
