package io.strata.model.weights;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Random;

import io.strata.model.TestModels;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.CheckpointException;
import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.SafetensorsWriter;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WeightMatrixTest {

    @Test
    void fp8FixtureWeightsDequantizeBlockByBlock() {
        try (Checkpoint c = Checkpoint.open(TestModels.fp8())) {
            Tensor w = c.tensor("layers.0.attn.wq_b.weight"); // [2048, 128], scale [16, 1]
            Tensor s = c.tensor("layers.0.attn.wq_b.scale");
            WeightMatrix m = WeightMatrix.of(w, s);
            assertThat(m).isInstanceOf(WeightMatrix.Fp8Blocks.class);
            assertThat(m.rows()).isEqualTo(2048);
            assertThat(m.cols()).isEqualTo(128);
            float[] all = m.toFloatArray();
            for (int r = 0; r < 2048; r++) {
                for (int col = 0; col < 128; col++) {
                    float expected = w.e4m3((long) r * 128 + col) * s.e8m0((r / 128) * 1 + col / 128);
                    assertThat(all[r * 128 + col]).isEqualTo(expected);
                }
            }
            float[] row = new float[256];
            WeightMatrix.of(c.tensor("layers.0.attn.wq_a.weight"), c.tensor("layers.0.attn.wq_a.scale")).readRow(0, row);
            assertThat(row[0]).isEqualTo(-2f * 0x1p-4f); // byte c0 · 2^(0x7b-127)
            assertThat(row[128]).isEqualTo(c.tensor("layers.0.attn.wq_a.weight").e4m3(128) * 0x1p-5f); // scale 0x7a
        }
    }

    @Test
    void fp4FixtureExpertsUnpackLowNibbleFirstWithPer32Scales() {
        try (Checkpoint c = Checkpoint.open(TestModels.fp8())) {
            Tensor w = c.tensor("layers.0.ffn.experts.0.w1.weight"); // I8 [128, 128] → 256 logical columns
            Tensor s = c.tensor("layers.0.ffn.experts.0.w1.scale"); // [128, 8]
            WeightMatrix m = WeightMatrix.of(w, s);
            assertThat(m).isInstanceOf(WeightMatrix.Fp4Groups.class);
            assertThat(m.cols()).isEqualTo(256);
            float[] row = new float[256];
            m.readRow(0, row);
            assertThat(row).startsWith(-0.5f * 0x1p-4f, 3f * 0x1p-4f, 6f * 0x1p-4f, 0f);
            for (int r = 0; r < 128; r += 17) {
                m.readRow(r, row);
                for (int col = 0; col < 256; col++) {
                    byte b = w.int8((long) r * 128 + col / 2);
                    float q = col % 2 == 0 ? Fp4E2m1.low(b) : Fp4E2m1.high(b);
                    assertThat(row[col]).isEqualTo(q * s.e8m0((long) r * 8 + col / 32));
                }
            }
        }
    }

    @Test
    void bf16WeightsNeedNoScale() {
        try (Checkpoint c = Checkpoint.open(TestModels.stable())) {
            WeightMatrix m = WeightMatrix.of(c.tensor("layers.0.attn.wq_a.weight"), null);
            assertThat(m).isInstanceOf(WeightMatrix.Plain.class);
            float[] row = new float[256];
            m.readRow(3, row);
            assertThat(row[7]).isEqualTo(c.tensor("layers.0.attn.wq_a.weight").bf16(3 * 256 + 7));
        }
    }

    @Test
    void partialEdgeBlocksUseTheirOwnScale(@TempDir Path tmp) throws Exception {
        int rows = 130;
        int cols = 200;
        byte[] codes = new byte[rows * cols];
        new Random(7).nextBytes(codes);
        for (int i = 0; i < codes.length; i++) {
            if ((codes[i] & 0x7F) == 0x7F) {
                codes[i] = 0x38;
            }
        }
        byte[] scales = {E8m0.fromExponent(0), E8m0.fromExponent(-3), E8m0.fromExponent(2), E8m0.fromExponent(5)};
        new SafetensorsWriter().add("w.weight", DType.F8_E4M3, new int[] {rows, cols}, codes)
                .add("w.scale", DType.F8_E8M0, new int[] {2, 2}, scales)
                .write(tmp.resolve(Checkpoint.SINGLE_FILE));
        try (Checkpoint c = Checkpoint.open(tmp)) {
            WeightMatrix m = WeightMatrix.of(c.tensor("w.weight"), c.tensor("w.scale"));
            float[] row = new float[cols];
            m.readRow(129, row);
            assertThat(row[199]).isEqualTo(Fp8E4m3.decode(codes[129 * cols + 199]) * 32f);
            assertThat(row[0]).isEqualTo(Fp8E4m3.decode(codes[129 * cols]) * 4f);
            m.readRow(0, row);
            assertThat(row[150]).isEqualTo(Fp8E4m3.decode(codes[150]) * 0.125f);
            assertThatThrownBy(() -> m.readRow(130, new float[cols])).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void missingOrMisshapenScalesAreNamed() {
        try (Checkpoint c = Checkpoint.open(TestModels.fp8())) {
            Tensor w = c.tensor("layers.0.attn.wq_a.weight");
            assertThatThrownBy(() -> WeightMatrix.of(w, null)).isInstanceOf(CheckpointException.class)
                    .hasMessageContaining("layers.0.attn.wq_a.weight").hasMessageContaining("no .scale");
            assertThatThrownBy(() -> WeightMatrix.of(w, c.tensor("layers.0.attn.wq_b.scale")))
                    .isInstanceOf(CheckpointException.class).hasMessageContaining("layers.0.attn.wq_b.scale")
                    .hasMessageContaining("expected F8_E8M0[1, 2]");
        }
    }
}
