package io.strata.model.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import io.strata.model.TestModels;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.DType;
import io.strata.model.config.ModelConfig;
import io.strata.model.config.ReferenceModel;
import org.junit.jupiter.api.Test;

class WeightCatalogueTest {

    @Test
    void flashCensusIs69187() {
        WeightCatalogue flash = WeightCatalogue.of(ReferenceModel.V4_FLASH.config());
        assertThat(flash.size()).isEqualTo(69_187);
        assertThat(flash.countByDtype()).containsEntry(DType.I64, 3L).containsEntry(DType.I8, 44L * 256 * 3);
    }

    @Test
    void proCensusIs145116() {
        assertThat(WeightCatalogue.of(ReferenceModel.V4_PRO.config()).size()).isEqualTo(145_116);
    }

    /** The 46 Flash shards add up to 159,617,149,040 bytes; data alone must be that minus the headers. */
    @Test
    void flashDataBytesFitTheReleasedShards() {
        long data = WeightCatalogue.of(ReferenceModel.V4_FLASH.config()).totalBytes();
        long shards = 159_617_149_040L;
        assertThat(data).isLessThan(shards);
        assertThat(shards - data).as("46 headers").isLessThan(46L * 4 * 1024 * 1024);
    }

    @Test
    void flashShapesAndDtypesOfTheSpec() {
        WeightCatalogue c = WeightCatalogue.of(ReferenceModel.V4_FLASH.config());
        assertSpec(c, "embed.weight", DType.BF16, 129280, 4096);
        assertSpec(c, "hc_head_fn", DType.F32, 4, 16384);
        assertSpec(c, "layers.0.attn.wq_b.scale", DType.F8_E8M0, 256, 8);
        assertSpec(c, "layers.0.attn.wo_a.weight", DType.F8_E4M3, 8192, 4096);
        assertSpec(c, "layers.0.attn.wo_b.weight", DType.F8_E4M3, 4096, 8192);
        assertSpec(c, "layers.0.attn.attn_sink", DType.F32, 64);
        assertSpec(c, "layers.0.ffn.gate.tid2eid", DType.I64, 129280, 6);
        assertSpec(c, "layers.2.ffn.gate.tid2eid", DType.I64, 129280, 6);
        assertThat(c.find("layers.3.ffn.gate.tid2eid")).isEmpty();
        assertSpec(c, "layers.3.ffn.gate.bias", DType.F32, 256);
        assertThat(c.find("layers.0.ffn.gate.bias")).isEmpty();
        assertSpec(c, "layers.2.attn.compressor.ape", DType.F32, 4, 1024);
        assertSpec(c, "layers.2.attn.compressor.wkv.weight", DType.BF16, 1024, 4096);
        assertSpec(c, "layers.3.attn.compressor.ape", DType.F32, 128, 512);
        assertSpec(c, "layers.3.attn.compressor.wgate.weight", DType.BF16, 512, 4096);
        assertThat(c.find("layers.0.attn.compressor.ape")).isEmpty();
        assertThat(c.find("layers.3.attn.indexer.wq_b.weight")).isEmpty();
        assertSpec(c, "layers.2.attn.indexer.wq_b.weight", DType.F8_E4M3, 8192, 1024);
        assertSpec(c, "layers.2.attn.indexer.weights_proj.weight", DType.BF16, 64, 4096);
        assertSpec(c, "layers.2.attn.indexer.compressor.ape", DType.F32, 4, 256);
        assertSpec(c, "layers.2.attn.indexer.compressor.norm.weight", DType.BF16, 128);
        assertSpec(c, "layers.5.ffn.experts.17.w1.weight", DType.I8, 2048, 2048);
        assertSpec(c, "layers.5.ffn.experts.17.w1.scale", DType.F8_E8M0, 2048, 128);
        assertSpec(c, "layers.5.ffn.experts.255.w2.weight", DType.I8, 4096, 1024);
        assertSpec(c, "layers.5.ffn.experts.255.w2.scale", DType.F8_E8M0, 4096, 64);
        assertSpec(c, "layers.5.ffn.shared_experts.w2.weight", DType.F8_E4M3, 4096, 2048);
        assertSpec(c, "layers.5.hc_attn_fn", DType.F32, 24, 16384);
        assertSpec(c, "mtp.0.e_proj.weight", DType.F8_E4M3, 4096, 4096);
        assertSpec(c, "mtp.0.hc_head_scale", DType.F32, 1);
        assertSpec(c, "mtp.0.ffn.gate.bias", DType.F32, 256);
        assertThat(c.find("mtp.0.attn.compressor.ape")).isEmpty();
        assertThat(c.find("mtp.0.embed.weight")).isEmpty();
        assertThat(c.find("layers.43.attn_norm.weight")).isEmpty();
    }

    @Test
    void proLayersZeroAndOneAreC128a() {
        WeightCatalogue c = WeightCatalogue.of(ReferenceModel.V4_PRO.config());
        assertSpec(c, "layers.0.attn.compressor.ape", DType.F32, 128, 512);
        assertSpec(c, "layers.0.attn.wo_a.weight", DType.F8_E4M3, 16384, 4096);
        assertSpec(c, "layers.0.attn.wq_b.weight", DType.F8_E4M3, 65536, 1536);
        assertSpec(c, "layers.60.attn.indexer.wq_b.weight", DType.F8_E4M3, 8192, 1536);
        assertSpec(c, "layers.1.ffn.experts.383.w3.weight", DType.I8, 3072, 3584);
    }

    @Test
    void bothFixturesMatchTheirCatalogueExactly() throws Exception {
        for (var dir : List.of(TestModels.fp8(), TestModels.stable())) {
            WeightCatalogue c = WeightCatalogue.of(ModelConfig.parse(dir.resolve("config.json")));
            try (Checkpoint ckpt = Checkpoint.open(dir)) {
                ValidationReport r = ValidationReport.check(c, ckpt);
                assertThat(r.problems()).as(dir.toString()).isEmpty();
                assertThat(r.isClean()).isTrue();
                assertThat(c.size()).isEqualTo(ckpt.size());
                assertThat(r.summary()).contains("all " + c.size() + " expected tensors");
            }
        }
    }

    private static void assertSpec(WeightCatalogue c, String name, DType dtype, Integer... shape) {
        assertThat(c.find(name)).as(name).contains(new TensorSpec(name, dtype, List.of(shape)));
    }
}
