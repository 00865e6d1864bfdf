package io.strata.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.strata.model.catalogue.SparseCheckpoint;
import io.strata.model.catalogue.WeightCatalogue;
import io.strata.model.checkpoint.DType;
import io.strata.model.config.LayerKind;
import io.strata.model.config.ReferenceModel;
import io.strata.model.weights.WeightMatrix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader on a checkpoint with the full structure of the V4-Flash release (config, 46 shards, index,
 * 69,187 tensors with real dtypes, shapes and offsets), written sparse: real headers, data holes.
 */
class ReleaseStructureTest {

    @TempDir
    Path tmp;

    @Test
    void aFlashShapedCheckpointLoadsAndValidatesClean() throws IOException {
        assumeTrue(sparseFilesWork(), "filesystem of " + tmp + " has no sparse files; would write 160 GB");
        String configJson;
        try (var in = getClass().getClassLoader().getResourceAsStream(ReferenceModel.V4_FLASH.resourcePath())) {
            configJson = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path dir = tmp.resolve("flash");
        List<Path> shards = SparseCheckpoint.write(WeightCatalogue.of(ReferenceModel.V4_FLASH.config()), configJson,
                dir, 46);
        assertThat(shards).hasSize(46);
        long apparent = 0;
        for (Path s : shards) {
            apparent += Files.size(s);
        }
        assertThat(apparent).isBetween(159_609_485_896L, 159_609_485_896L + 46L * 4 * 1024 * 1024);

        try (LoadedModel m = ModelLoader.load(dir)) {
            assertThat(m.checkpoint().size()).isEqualTo(69_187);
            assertThat(m.validation().isClean()).isTrue();
            assertThat(m.schedule().layer(42).kind()).isEqualTo(LayerKind.C4A);
            assertThat(m.layer(43).spec().mtp()).isTrue();
            assertThat(m.tensor("embed.weight").hasShape(129280, 4096)).isTrue();
            WeightMatrix expert = m.layer(40).expert(255, "w2");
            assertThat(expert).isInstanceOf(WeightMatrix.Fp4Groups.class);
            assertThat(expert.rows()).isEqualTo(4096);
            assertThat(expert.cols()).isEqualTo(2048);
            float[] row = new float[2048];
            expert.readRow(4095, row); // the last row of a tensor deep inside a 3.5 GB shard: a hole, zeros
            assertThat(row).containsOnly(0f);
            assertThat(m.layer(2).tensor("ffn.gate.tid2eid").dtype()).isEqualTo(DType.I64);
            assertThat(m.layer(43).linear("e_proj").rows()).isEqualTo(4096);
        }
    }

    /** A 256 MiB file with a hole must occupy (almost) no blocks. */
    private boolean sparseFilesWork() {
        Path probe = tmp.resolve("sparse-probe");
        try {
            try (RandomAccessFile f = new RandomAccessFile(probe.toFile(), "rw")) {
                f.setLength(256L << 20);
            }
            Process du = new ProcessBuilder("du", "-k", probe.toString()).redirectErrorStream(true).start();
            String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return du.waitFor() == 0 && Long.parseLong(out.split("\\s+")[0]) < 1024;
        } catch (IOException | InterruptedException | NumberFormatException e) {
            return false;
        } finally {
            probe.toFile().delete();
        }
    }
}
