package io.strata.model.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;

import io.strata.model.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bundled fixtures, read through the index, with values checked against the raw bytes. */
class CheckpointFixtureTest {

    @Test
    void fp8FixtureOpensThroughItsIndexWithTypedTensors() {
        try (Checkpoint ckpt = Checkpoint.open(TestModels.fp8())) {
            assertThat(ckpt.size()).isEqualTo(596);
            assertThat(ckpt.files()).hasSize(2);

            Tensor wqA = ckpt.tensor("layers.0.attn.wq_a.weight");
            assertThat(wqA.dtype()).isEqualTo(DType.F8_E4M3);
            assertThat(wqA.shape()).containsExactly(128, 256);
            assertThat(wqA.file()).endsWith(".safetensors");
            // bytes c0 30 ae b9: -2, 0.5, -0.4375, -1.125
            float[] row = new float[256];
            wqA.readRow(0, row);
            assertThat(row).startsWith(-2f, 0.5f, -0.4375f, -1.125f);
            assertThat(wqA.e4m3(1)).isEqualTo(0.5f);

            Tensor scale = ckpt.tensor("layers.0.attn.wq_a.scale");
            assertThat(scale.dtype()).isEqualTo(DType.F8_E8M0);
            assertThat(scale.toFloatArray()).containsExactly(0x1p-4f, 0x1p-5f); // 0x7b, 0x7a

            Tensor tid2eid = ckpt.tensor("layers.0.ffn.gate.tid2eid");
            assertThat(tid2eid.dtype()).isEqualTo(DType.I64);
            assertThat(tid2eid.toIntArray()).startsWith(2, 6, 6, 2, 0, 7);

            Tensor base = ckpt.tensor("hc_head_base");
            assertThat(base.toFloatArray()).containsExactly(-0.12766627967357635f, 0.03435945138335228f,
                    0.05807901546359062f, 0.011994756758213043f);

            Tensor w1 = ckpt.tensor("layers.0.ffn.experts.0.w1.weight");
            assertThat(w1.dtype()).isEqualTo(DType.I8);
            assertThat(w1.shape()).containsExactly(128, 128);
            float[] fp4 = new float[4];
            w1.readFp4(0, fp4, 0, 2); // 0x59 0x07: low nibble first
            assertThat(fp4).containsExactly(-0.5f, 3f, 6f, 0f);
        }
    }

    @Test
    void stableFixtureIsBf16() {
        try (Checkpoint ckpt = Checkpoint.open(TestModels.stable())) {
            assertThat(ckpt.size()).isEqualTo(367);
            Tensor embed = ckpt.tensor("embed.weight");
            assertThat(embed.dtype()).isEqualTo(DType.BF16);
            assertThat(embed.rows()).isEqualTo(1024);
            assertThat(embed.cols()).isEqualTo(256);
            assertThat(embed.bf16(0)).isEqualTo(-0.1689453125f);
            assertThat(embed.getFloat(3)).isEqualTo(-0.443359375f);
            float[] row = new float[256];
            embed.readRow(0, row);
            assertThat(row).startsWith(-0.1689453125f, -0.16015625f, -0.291015625f, -0.443359375f);
            assertThat(embed.sliceRows(1, 3).rows()).isEqualTo(2);
            assertThat(embed.sliceRows(1, 3).bf16(0)).isEqualTo(embed.bf16(256));
        }
    }

    @Test
    void tensorsOfAClosedCheckpointThrowInsteadOfCrashing() {
        Tensor t;
        try (Checkpoint ckpt = Checkpoint.open(TestModels.stable())) {
            t = ckpt.tensor("norm.weight");
            assertThat(t.bf16(0)).isFinite();
        }
        assertThatThrownBy(() -> t.bf16(0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void outOfRangeReadsThrow() {
        try (Checkpoint ckpt = Checkpoint.open(TestModels.stable())) {
            Tensor t = ckpt.tensor("norm.weight");
            assertThatThrownBy(() -> t.bf16(256)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> t.readFloats(200, new float[100], 0, 100))
                    .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("norm.weight");
        }
    }

    @Test
    void missingTensorIsNamed() {
        try (Checkpoint ckpt = Checkpoint.open(TestModels.stable())) {
            assertThatThrownBy(() -> ckpt.tensor("layers.9.attn.wq_a.weight"))
                    .isInstanceOf(CheckpointException.class).hasMessageContaining("layers.9.attn.wq_a.weight");
        }
    }

    @Test
    void indexProblemsNameTheTensorAndFile(@TempDir Path tmp) throws Exception {
        Path src = TestModels.stable();
        for (String f : new String[] {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
            Files.copy(src.resolve(f), tmp.resolve(f));
        }
        String index = Files.readString(src.resolve(Checkpoint.INDEX_FILE));

        Files.writeString(tmp.resolve(Checkpoint.INDEX_FILE),
                index.replace("\"hc_head_base\": \"model-00001-of-00002.safetensors\"",
                        "\"hc_head_base\": \"model-00003-of-00002.safetensors\""));
        assertThatThrownBy(() -> Checkpoint.open(tmp)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining("model-00003-of-00002.safetensors").hasMessageContaining("does not exist");

        Files.writeString(tmp.resolve(Checkpoint.INDEX_FILE),
                index.replace("\"weight_map\": {", "\"weight_map\": {\n  \"ghost.weight\": \"model-00001-of-00002.safetensors\","));
        assertThatThrownBy(() -> Checkpoint.open(tmp)).isInstanceOfSatisfying(CheckpointException.class, e -> {
            assertThat(e.tensor()).isEqualTo("ghost.weight");
            assertThat(e.getMessage()).contains("absent from the shard", "model-00001-of-00002.safetensors");
        });

        Files.writeString(tmp.resolve(Checkpoint.INDEX_FILE), index.replace(
                "  \"hc_head_base\": \"model-00001-of-00002.safetensors\",\n", ""));
        assertThatThrownBy(() -> Checkpoint.open(tmp)).isInstanceOfSatisfying(CheckpointException.class,
                e -> assertThat(e.getMessage()).contains("hc_head_base", "not listed"));

        Files.writeString(tmp.resolve(Checkpoint.INDEX_FILE), "{\"weight_map\": [");
        assertThatThrownBy(() -> Checkpoint.open(tmp)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining(Checkpoint.INDEX_FILE).hasMessageContaining("not valid JSON");
    }

    @Test
    void emptyDirectoryIsExplained(@TempDir Path tmp) {
        assertThatThrownBy(() -> Checkpoint.open(tmp)).isInstanceOf(CheckpointException.class)
                .hasMessageContaining("no model.safetensors.index.json and no model.safetensors");
    }
}
