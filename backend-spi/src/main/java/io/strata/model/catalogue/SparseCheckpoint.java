package io.strata.model.catalogue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.strata.model.checkpoint.Checkpoint;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a checkpoint with the exact structure a config implies — every tensor of its {@link WeightCatalogue}
 * with real dtype, shape and byte offsets, sharded like a release with an index — but as SPARSE files: the
 * headers are real, the data sections are holes that read as zeros and take no disk. Lets tests and benchmarks
 * open a V4-Flash / V4-Pro sized model (160 GB / 865 GB apparent) on a laptop. Needs a filesystem with
 * sparse-file support (ext4, xfs, btrfs, tmpfs, APFS).
 */
public final class SparseCheckpoint {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private SparseCheckpoint() {
    }

    /**
     * Writes {@code config.json} (the given text), the shards and {@code model.safetensors.index.json} into
     * {@code dir}, splitting the catalogue into about {@code shards} files of similar byte size.
     *
     * @return the shard paths
     */
    public static List<Path> write(WeightCatalogue catalogue, String configJson, Path dir, int shards)
            throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), configJson);
        List<TensorSpec> specs = new ArrayList<>(catalogue.specs().values());
        long total = catalogue.totalBytes();
        long perShard = total / Math.max(1, shards) + 1;
        ObjectNode index = JSON.createObjectNode();
        index.putObject("metadata").put("total_size", total);
        ObjectNode weightMap = index.putObject("weight_map");
        List<List<TensorSpec>> groups = new ArrayList<>();
        for (int from = 0; from < specs.size(); ) {
            long bytes = 0;
            int to = from;
            while (to < specs.size() && (bytes < perShard || to == from)) {
                bytes += specs.get(to++).byteSize();
            }
            groups.add(specs.subList(from, to));
            from = to;
        }
        List<Path> written = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            String name = String.format("model-%05d-of-%05d.safetensors", g + 1, groups.size());
            Path file = dir.resolve(name);
            writeShard(file, groups.get(g));
            groups.get(g).forEach(s -> weightMap.put(s.name(), name));
            written.add(file);
        }
        Files.writeString(dir.resolve(Checkpoint.INDEX_FILE), JSON.writeValueAsString(index));
        return written;
    }

    private static void writeShard(Path file, List<TensorSpec> specs) throws IOException {
        ObjectNode header = JSON.createObjectNode();
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
        byte[] h = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        head.putLong(padded).put(h);
        while (head.hasRemaining()) {
            head.put((byte) ' ');
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.write(head.array());
            f.setLength(8L + padded + offset); // the hole: no blocks allocated
        }
    }
}
