package io.strata.model.checkpoint;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One {@code .safetensors} file, memory-mapped read-only into a shared {@link Arena}: an 8-byte
 * little-endian header length N, N bytes of JSON ({@code name → {dtype, shape, data_offsets}} plus an optional
 * {@code __metadata__}), then the data section the offsets point into. The header is checked completely when
 * the file is opened — sizes, bounds, overlaps — so a {@link Tensor} handed out is always in range.
 * Closing releases the mapping; tensors from a closed file throw on access instead of crashing.
 */
public final class SafetensorsFile implements TensorSet, AutoCloseable {

    /** The reference implementation refuses headers above 100 MB; so do we. */
    public static final long MAX_HEADER_BYTES = 100L * 1024 * 1024;
    private static final String METADATA = "__metadata__";
    /**
     * Strict about duplicate names; no name canonicalization, because a release has ~10^5 distinct tensor names
     * that would only churn Jackson's symbol table (it dominated the load time of a V4-Pro index).
     */
    static final JsonMapper JSON = JsonMapper.builder(JsonFactory.builder()
                    .disable(TokenStreamFactory.Feature.CANONICALIZE_PROPERTY_NAMES).build())
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private final Path path;
    private final Arena arena;
    private final SequencedMap<String, Tensor> tensors;
    private final Map<String, String> metadata;

    private SafetensorsFile(Path path, Arena arena, SequencedMap<String, Tensor> tensors, Map<String, String> metadata) {
        this.path = path;
        this.arena = arena;
        this.tensors = tensors;
        this.metadata = metadata;
    }

    /** Maps and validates {@code file}; throws {@link CheckpointException} naming the file (and tensor). */
    public static SafetensorsFile open(Path file) {
        String name = file.toString();
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size < 8) {
                throw new CheckpointException(name, null, "truncated: " + size + " bytes, shorter than the 8-byte header length");
            }
            MemorySegment all = channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            var parsed = parse(name, all);
            return new SafetensorsFile(file, arena, parsed.tensors, parsed.metadata);
        } catch (IOException e) {
            arena.close();
            throw new CheckpointException(name, null, "cannot read: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private record Parsed(SequencedMap<String, Tensor> tensors, Map<String, String> metadata) {
    }

    private static Parsed parse(String file, MemorySegment all) {
        long size = all.byteSize();
        long headerLength = all.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        if (headerLength < 2 || headerLength > MAX_HEADER_BYTES) {
            throw new CheckpointException(file, null, "bad header length " + Long.toUnsignedString(headerLength)
                    + " (must be 2.." + MAX_HEADER_BYTES + " bytes)");
        }
        if (8 + headerLength > size) {
            throw new CheckpointException(file, null, "truncated: header length " + headerLength
                    + " exceeds the " + (size - 8) + " bytes after the length field");
        }
        byte[] headerBytes = all.asSlice(8, headerLength).toArray(ValueLayout.JAVA_BYTE);
        String headerText;
        try {
            headerText = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(headerBytes)).toString();
        } catch (CharacterCodingException e) {
            throw new CheckpointException(file, null, "header is not valid UTF-8");
        }
        JsonNode header;
        try {
            header = JSON.readTree(headerText);
        } catch (JacksonException e) {
            throw new CheckpointException(file, null, "header is not valid JSON: " + e.getOriginalMessage());
        }
        if (header == null || !header.isObject()) {
            throw new CheckpointException(file, null, "header must be a JSON object");
        }
        MemorySegment dataSection = all.asSlice(8 + headerLength);
        long dataSize = dataSection.byteSize();

        record Entry(String name, DType dtype, int[] shape, long begin, long end) {
        }
        var entries = new ArrayList<Entry>();
        Map<String, String> metadata = Map.of();
        for (var property : header.properties()) {
            String tensor = property.getKey();
            JsonNode node = property.getValue();
            if (METADATA.equals(tensor)) {
                metadata = readMetadata(file, node);
                continue;
            }
            if (!node.isObject()) {
                throw new CheckpointException(file, tensor, "header entry must be an object");
            }
            JsonNode dtypeNode = node.get("dtype");
            if (dtypeNode == null || !dtypeNode.isString()) {
                throw new CheckpointException(file, tensor, "missing or non-string 'dtype'");
            }
            DType dtype = DType.fromHeaderName(dtypeNode.stringValue());
            if (dtype == null) {
                throw new CheckpointException(file, tensor, "unknown dtype '" + dtypeNode.stringValue() + "'");
            }
            int[] shape = readShape(file, tensor, node.get("shape"));
            long[] offsets = readOffsets(file, tensor, node.get("data_offsets"));
            if (offsets[1] > dataSize) {
                throw new CheckpointException(file, tensor, "data_offsets [" + offsets[0] + ", " + offsets[1]
                        + "] end beyond the data section of " + dataSize + " bytes (file truncated or offsets wrong)");
            }
            long expected = elements(shape) * dtype.byteSize();
            if (expected < 0 || offsets[1] - offsets[0] != expected) {
                throw new CheckpointException(file, tensor, "data_offsets span " + (offsets[1] - offsets[0])
                        + " bytes but " + dtype + java.util.Arrays.toString(shape) + " needs " + expected);
            }
            entries.add(new Entry(tensor, dtype, shape, offsets[0], offsets[1]));
        }
        List<Entry> byOffset = new ArrayList<>(entries);
        byOffset.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        Entry furthest = null; // the entry reaching furthest so far; empty tensors overlap nothing
        for (Entry cur : byOffset) {
            if (cur.end() == cur.begin()) {
                continue;
            }
            if (furthest != null && cur.begin() < furthest.end()) {
                throw new CheckpointException(file, cur.name(), "data_offsets [" + cur.begin() + ", " + cur.end()
                        + "] overlap tensor '" + furthest.name() + "' at [" + furthest.begin() + ", "
                        + furthest.end() + "]");
            }
            if (furthest == null || cur.end() > furthest.end()) {
                furthest = cur;
            }
        }
        SequencedMap<String, Tensor> tensors = new LinkedHashMap<>();
        for (Entry e : entries) {
            tensors.put(e.name(), new Tensor(e.name(), e.dtype(), e.shape(),
                    dataSection.asSlice(e.begin(), e.end() - e.begin()), file));
        }
        return new Parsed(Collections.unmodifiableSequencedMap(tensors), metadata);
    }

    private static long elements(int[] shape) {
        long n = 1;
        for (int d : shape) {
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                return -1;
            }
            if (n > (1L << 56)) {
                return -1;
            }
        }
        return n;
    }

    private static Map<String, String> readMetadata(String file, JsonNode node) {
        if (!node.isObject()) {
            throw new CheckpointException(file, null, "__metadata__ must be an object of strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var p : node.properties()) {
            if (!p.getValue().isString()) {
                throw new CheckpointException(file, null, "__metadata__ value '" + p.getKey() + "' must be a string");
            }
            out.put(p.getKey(), p.getValue().stringValue());
        }
        return Collections.unmodifiableMap(out);
    }

    private static int[] readShape(String file, String tensor, JsonNode node) {
        if (node == null || !node.isArray()) {
            throw new CheckpointException(file, tensor, "missing or non-array 'shape'");
        }
        int[] shape = new int[node.size()];
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = node.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToInt() || d.intValue() < 0) {
                throw new CheckpointException(file, tensor, "shape[" + i + "] must be a non-negative 32-bit integer, got " + d);
            }
            shape[i] = d.intValue();
        }
        return shape;
    }

    private static long[] readOffsets(String file, String tensor, JsonNode node) {
        if (node == null || !node.isArray() || node.size() != 2) {
            throw new CheckpointException(file, tensor, "'data_offsets' must be an array [begin, end]");
        }
        long[] out = new long[2];
        for (int i = 0; i < 2; i++) {
            JsonNode d = node.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToLong() || d.longValue() < 0) {
                throw new CheckpointException(file, tensor, "data_offsets[" + i + "] must be a non-negative integer, got " + d);
            }
            out[i] = d.longValue();
        }
        if (out[1] < out[0]) {
            throw new CheckpointException(file, tensor, "data_offsets [" + out[0] + ", " + out[1] + "] end before begin");
        }
        return out;
    }

    public Path path() {
        return path;
    }

    /** Tensors in header order. */
    @Override
    public SequencedMap<String, Tensor> tensors() {
        return tensors;
    }

    @Override
    public CheckpointException noSuchTensor(String name) {
        return new CheckpointException(path.toString(), name, "no such tensor in this file");
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    @Override
    public void close() {
        arena.close();
    }
}
