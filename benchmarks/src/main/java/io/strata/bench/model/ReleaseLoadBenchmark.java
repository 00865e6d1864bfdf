package io.strata.bench.model;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.strata.model.LoadedModel;
import io.strata.model.ModelLoader;
import io.strata.model.catalogue.TensorSpec;
import io.strata.model.catalogue.WeightCatalogue;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
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
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

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
        ModelConfig config = model.config();
        try (var in = ReleaseLoadBenchmark.class.getClassLoader().getResourceAsStream(model.resourcePath())) {
            Files.write(dir.resolve(ModelLoader.CONFIG_FILE), in.readAllBytes());
        }
        List<TensorSpec> specs = new ArrayList<>(WeightCatalogue.of(config).specs().values());
        long total = specs.stream().mapToLong(TensorSpec::byteSize).sum();
        int shards = model == ReferenceModel.V4_FLASH ? 46 : 64;
        long perShard = total / shards + 1;
        JsonMapper json = JsonMapper.builder().build();
        ObjectNode index = json.createObjectNode();
        index.putObject("metadata").put("total_size", total);
        ObjectNode weightMap = index.putObject("weight_map");
        int shard = 0;
        int from = 0;
        while (from < specs.size()) {
            long bytes = 0;
            int to = from;
            while (to < specs.size() && (bytes < perShard || to == from)) {
                bytes += specs.get(to++).byteSize();
            }
            String name = String.format("model-%05d-of-%05d.safetensors", shard + 1, shards);
            writeSparseShard(json, dir.resolve(name), specs.subList(from, to));
            specs.subList(from, to).forEach(s -> weightMap.put(s.name(), name));
            shard++;
            from = to;
        }
        Files.writeString(dir.resolve(Checkpoint.INDEX_FILE), json.writeValueAsString(index));
    }

    private static void writeSparseShard(JsonMapper json, Path file, List<TensorSpec> specs) throws IOException {
        ObjectNode header = json.createObjectNode();
        header.putObject("__metadata__").put("format", "pt");
        long offset = 0;
        for (TensorSpec s : specs) {
            ObjectNode e = header.putObject(s.name());
            e.put("dtype", s.dtype().name());
            var shape = e.putArray("shape");
            s.shape().forEach(shape::add);
            e.putArray("data_offsets").add(offset).add(offset + s.byteSize());
            offset += s.byteSize();
        }
        byte[] h = json.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
            f.write(h);
            for (int i = h.length; i < padded; i++) {
                f.write(' ');
            }
            f.setLength(8L + padded + offset);
        }
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
