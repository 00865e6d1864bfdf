package io.strata.bench.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.strata.model.LoadedModel;
import io.strata.model.ModelLoader;
import io.strata.model.catalogue.SparseCheckpoint;
import io.strata.model.catalogue.WeightCatalogue;
import io.strata.model.config.ReferenceModel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code ModelLoader.load} on a checkpoint with the exact structure of a release — every tensor of the
 * V4-Flash (69,187 in 46 shards) or V4-Pro catalogue with its real dtype, shape and byte size — written as
 * SPARSE files (headers only; the data holes take no disk). It measures what loading costs apart from
 * reading weights: config, index, 46+ headers, mapping, validation.
 * Run: {@code java -jar benchmarks/target/benchmarks.jar ReleaseLoadBenchmark} (needs a filesystem with
 * sparse files; about 160 GB / 865 GB of apparent size).
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(1)
@State(Scope.Benchmark)
public class ReleaseLoadBenchmark {

    @Param({"V4_FLASH"})
    public ReferenceModel model;

    Path dir;

    @Setup(Level.Trial)
    public void writeSparseCheckpoint() throws IOException {
        dir = Files.createTempDirectory("release-load");
        String configJson;
        try (var in = ReleaseLoadBenchmark.class.getClassLoader().getResourceAsStream(model.resourcePath())) {
            configJson = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        int shards = model == ReferenceModel.V4_FLASH ? 46 : 64;
        SparseCheckpoint.write(WeightCatalogue.of(model.config()), configJson, dir, shards);
    }

    @TearDown(Level.Trial)
    public void delete() throws IOException {
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    @Benchmark
    public int load() {
        try (LoadedModel m = ModelLoader.load(dir)) {
            return m.checkpoint().size();
        }
    }
}
