package io.strata.backend.cpu.ep;

import io.strata.backend.cpu.weights.TensorSource;
import io.strata.backend.cpu.weights.TensorView;
import io.strata.model.checkpoint.DType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One rank's view of a checkpoint: the replicated tensors (everything but routed experts) and the routed
 * experts of its own index range, and nothing else. Only the safetensors headers are read in full; the data
 * of the chosen tensors is memory-mapped in runs of adjacent chosen tensors, so the bytes of another rank's
 * experts are never mapped, let alone read. Asking for such a tensor is an error naming the rank's range.
 */
public final class ShardedExpertSource implements TensorSource, AutoCloseable {
    private static final Pattern EXPERT = Pattern.compile("\\.ffn\\.experts\\.(\\d+)\\.");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final ExpertPlacement placement;
    private final int rank;
    private final Arena arena = Arena.ofShared();
    private final Map<String, TensorView> views = new HashMap<>();
    private final Map<String, Integer> othersExperts = new HashMap<>();
    private final List<Run> runs = new ArrayList<>();
    private long mappedBytes;

    /** One mapping this rank made: bytes {@code [begin, end)} of {@code file}. */
    public record Run(Path file, long begin, long end) {
    }

    /** A tensor as a safetensors header places it: absolute byte range {@code [begin, end)} of {@code file}. */
    public record Entry(String name, DType dtype, long[] shape, Path file, long begin, long end) {
        public long bytes() {
            return end - begin;
        }
    }

    private ShardedExpertSource(Path dir, ExpertPlacement placement, int rank) throws IOException {
        this.placement = placement;
        this.rank = rank;
        Map<Path, List<Entry>> byFile = new HashMap<>();
        for (Entry e : scan(dir)) {
            int expert = expertOf(e.name());
            if (expert >= 0 && !placement.holds(rank, expert)) {
                othersExperts.put(e.name(), expert);
            } else {
                byFile.computeIfAbsent(e.file(), f -> new ArrayList<>()).add(e);
            }
        }
        try {
            for (var f : byFile.entrySet()) {
                mapRuns(f.getKey(), f.getValue());
            }
        } catch (IOException | RuntimeException ex) {
            arena.close();
            throw ex;
        }
    }

    /** Rank {@code rank}'s share of the checkpoint in {@code dir} ({@code model.safetensors} or an index and shards). */
    public static ShardedExpertSource open(Path dir, ExpertPlacement placement, int rank) throws IOException {
        if (rank < 0 || rank >= placement.ranks()) {
            throw new IllegalArgumentException("rank " + rank + " outside [0, " + placement.ranks() + ")");
        }
        return new ShardedExpertSource(dir, placement, rank);
    }

    /** The routed expert a tensor belongs to ({@code layers.N.ffn.experts.E.…}, {@code mtp.K.ffn.experts.E.…}), else −1. */
    public static int expertOf(String tensor) {
        Matcher m = EXPERT.matcher(tensor);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** Bytes each rank maps: replicated tensors plus its experts; from the headers alone. */
    public static long[] bytesPerRank(Path dir, ExpertPlacement placement) throws IOException {
        long[] out = new long[placement.ranks()];
        for (Entry e : scan(dir)) {
            int expert = expertOf(e.name());
            for (int r = 0; r < out.length; r++) {
                if (expert < 0 || placement.holds(r, expert)) {
                    out[r] += e.bytes();
                }
            }
        }
        return out;
    }

    public int rank() {
        return rank;
    }

    public ExpertPlacement placement() {
        return placement;
    }

    /** Names of the tensors this rank mapped. */
    public SortedSet<String> mappedTensors() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(views.keySet()));
    }

    /** The file ranges this rank mapped. */
    public List<Run> mappedRuns() {
        return List.copyOf(runs);
    }

    /** Bytes of the tensors this rank mapped. */
    public long mappedBytes() {
        return mappedBytes;
    }

    @Override
    public TensorView tensor(String name) {
        TensorView v = views.get(name);
        if (v != null) {
            return v;
        }
        Integer expert = othersExperts.get(name);
        if (expert != null) {
            throw new IllegalArgumentException("tensor " + name + " belongs to expert " + expert + " of rank "
                + placement.owner(expert) + "; rank " + rank + " holds experts [" + placement.first(rank) + ", "
                + placement.end(rank) + ")");
        }
        throw new IllegalArgumentException("checkpoint has no tensor " + name);
    }

    @Override
    public boolean contains(String name) {
        return views.containsKey(name);
    }

    @Override
    public void close() {
        arena.close();
    }

    /** Maps each maximal run of byte-adjacent chosen tensors of one file once. */
    private void mapRuns(Path file, List<Entry> chosen) throws IOException {
        chosen.sort(Comparator.comparingLong(Entry::begin));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            int i = 0;
            while (i < chosen.size()) {
                int j = i + 1;
                while (j < chosen.size() && chosen.get(j).begin() == chosen.get(j - 1).end()) {
                    j++;
                }
                long begin = chosen.get(i).begin();
                long end = chosen.get(j - 1).end();
                MemorySegment run = MemorySegment.NULL;
                if (end > begin) {
                    run = ch.map(FileChannel.MapMode.READ_ONLY, begin, end - begin, arena);
                    runs.add(new Run(file, begin, end));
                }
                for (Entry e : chosen.subList(i, j)) {
                    MemorySegment data = e.bytes() == 0 ? MemorySegment.NULL : run.asSlice(e.begin() - begin, e.bytes());
                    views.put(e.name(), new TensorView(e.name(), e.dtype().name(), e.shape(), data));
                    mappedBytes += e.bytes();
                }
                i = j;
            }
        }
    }

    /** Every tensor of the checkpoint in {@code dir}, read from the headers (no tensor data is touched). */
    public static List<Entry> scan(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        Path index = dir.resolve("model.safetensors.index.json");
        if (Files.isRegularFile(index)) {
            JsonNode map = JSON.readTree(Files.readString(index)).get("weight_map");
            if (map == null || !map.isObject()) {
                throw new IOException(index + ": missing object 'weight_map'");
            }
            var shards = new TreeSet<String>();
            for (var e : map.properties()) {
                shards.add(e.getValue().stringValue());
            }
            for (String s : shards) {
                files.add(dir.resolve(s));
            }
        } else {
            files.add(dir.resolve("model.safetensors"));
        }
        List<Entry> out = new ArrayList<>();
        for (Path f : files) {
            readHeader(f, out);
        }
        return out;
    }

    private static void readHeader(Path file, List<Entry> out) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            readFully(ch, len, 0);
            long n = len.getLong(0);
            if (n < 2 || n > 100L * 1024 * 1024 || 8 + n > ch.size()) {
                throw new IOException(file + ": bad safetensors header length " + n);
            }
            ByteBuffer text = ByteBuffer.allocate((int) n);
            readFully(ch, text, 8);
            JsonNode header = JSON.readTree(new String(text.array(), StandardCharsets.UTF_8));
            long base = 8 + n;
            for (var p : header.properties()) {
                if (p.getKey().equals("__metadata__")) {
                    continue;
                }
                JsonNode node = p.getValue();
                DType dtype = DType.fromHeaderName(node.get("dtype").stringValue());
                if (dtype == null) {
                    throw new IOException(file + ": tensor " + p.getKey() + ": unknown dtype " + node.get("dtype"));
                }
                long[] shape = new long[node.get("shape").size()];
                long elements = 1;
                for (int i = 0; i < shape.length; i++) {
                    shape[i] = node.get("shape").get(i).asLong();
                    elements *= shape[i];
                }
                long begin = base + node.get("data_offsets").get(0).asLong();
                long end = base + node.get("data_offsets").get(1).asLong();
                if (end - begin != elements * dtype.byteSize() || end > ch.size() || begin < base) {
                    throw new IOException(file + ": tensor " + p.getKey() + ": data_offsets do not fit its shape or the file");
                }
                out.add(new Entry(p.getKey(), dtype, shape, file, begin, end));
            }
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
        while (buf.hasRemaining()) {
            int r = ch.read(buf, pos + buf.position());
            if (r < 0) {
                throw new IOException("unexpected end of file");
            }
        }
    }
}
