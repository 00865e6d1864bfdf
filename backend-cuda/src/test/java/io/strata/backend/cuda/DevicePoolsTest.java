package io.strata.backend.cuda;

import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.SafetensorsWriter;
import io.strata.model.checkpoint.Tensor;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DevicePoolsTest {
    private static final KvLayout KV = KvLayout.of(KvModelShape.synthetic("pools", 21, 20), KvPrecision.DEFAULT);

    @Test
    void pagesComeFromTheMeasuredFreeMemoryAndTheFraction() {
        long perPage = KV.buckets().stream().mapToLong(b -> b.rowBytes()).sum();
        long free = 100L << 30;
        long pages = DevicePools.pagesFor(KV, free, 0.9, 1L << 30);
        assertThat(pages).isEqualTo(((long) (free * 0.9) - (1L << 30)) / perPage);
        assertThat(pages * perPage).isLessThanOrEqualTo((long) (free * 0.9) - (1L << 30));
    }

    @Test
    void rejectsABadFractionAndTooLittleMemory() {
        assertThatThrownBy(() -> DevicePools.pagesFor(KV, 1L << 30, 1.5, 0)).hasMessageContaining("memory-fraction");
        assertThatThrownBy(() -> DevicePools.pagesFor(KV, 1000, 0.9, 0)).hasMessageContaining("not enough device memory");
    }

    @Test
    void allocatesPoolsAndUploadsMappedWeightsOnAGpu() throws Exception {
        GpuTest.assumeGpu();
        try (DevicePools pools = DevicePools.allocate(KV, 0.05, 0)) {
            assertThat(pools.pages()).isPositive();
            assertThat(pools.base(PageBucket.LARGE)).isNotZero();
        }
        // a real safetensors file, memory-mapped by the checkpoint reader, uploaded without a heap copy
        Path dir = Files.createTempDirectory("strata-weights");
        float[] values = new float[70_000];
        java.util.Random rnd = new java.util.Random(8);
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) rnd.nextGaussian();
        }
        new SafetensorsWriter().addF32("w", new int[]{700, 100}, values).write(dir.resolve(Checkpoint.SINGLE_FILE));
        try (Checkpoint c = Checkpoint.open(dir)) {
            Tensor t = c.tensors().get("w");
            try (DeviceBuffer b = DeviceWeights.upload(t)) {
                assertThat(b.downloadFloats(values.length)).isEqualTo(values);
            }
        }
    }
}
