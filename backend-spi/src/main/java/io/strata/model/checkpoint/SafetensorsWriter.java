package io.strata.model.checkpoint;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a {@code .safetensors} file from in-memory tensors (tests, small exports, derived checkpoints).
 * Tensors are laid out in insertion order without gaps; the header is padded with spaces to a multiple of 8.
 */
public final class SafetensorsWriter {

    private record Pending(String name, DType dtype, int[] shape, byte[] data) {
    }

    private final List<Pending> tensors = new ArrayList<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();

    /** Adds a tensor from its raw little-endian bytes. */
    public SafetensorsWriter add(String name, DType dtype, int[] shape, byte[] data) {
        long expected = dtype.byteSize();
        for (int d : shape) {
            expected *= d;
        }
        if (data.length != expected) {
            throw new IllegalArgumentException(name + ": " + data.length + " bytes for " + dtype + Arrays.toString(shape));
        }
        if (tensors.stream().anyMatch(t -> t.name().equals(name))) {
            throw new IllegalArgumentException("duplicate tensor " + name);
        }
        tensors.add(new Pending(name, dtype, shape.clone(), data.clone()));
        return this;
    }

    public SafetensorsWriter addF32(String name, int[] shape, float... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putFloat(v);
        }
        return add(name, DType.F32, shape, b.array());
    }

    public SafetensorsWriter addBf16(String name, int[] shape, float... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putShort(io.strata.model.format.Bf16.fromFloat(v));
        }
        return add(name, DType.BF16, shape, b.array());
    }

    public SafetensorsWriter addI64(String name, int[] shape, long... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : values) {
            b.putLong(v);
        }
        return add(name, DType.I64, shape, b.array());
    }

    public SafetensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    /** Copies an existing tensor's bytes (e.g. to rewrite a checkpoint with changes). */
    public SafetensorsWriter add(Tensor t) {
        byte[] bytes = new byte[Math.toIntExact(t.byteSize())];
        t.readBytes(0, bytes, 0, bytes.length);
        return add(t.name(), t.dtype(), t.shape(), bytes);
    }

    public List<String> names() {
        return tensors.stream().map(Pending::name).toList();
    }

    public void write(Path file) throws IOException {
        ObjectNode header = SafetensorsFile.JSON.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        long offset = 0;
        for (Pending t : tensors) {
            ObjectNode entry = header.putObject(t.name());
            entry.put("dtype", t.dtype().name());
            var shape = entry.putArray("shape");
            for (int d : t.shape()) {
                shape.add(d);
            }
            entry.putArray("data_offsets").add(offset).add(offset + t.data().length);
            offset += t.data().length;
        }
        byte[] json = SafetensorsFile.JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        byte[] headerBytes = Arrays.copyOf(json, padded);
        Arrays.fill(headerBytes, json.length, padded, (byte) ' ');
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
            out.write(headerBytes);
            for (Pending t : tensors) {
                out.write(t.data());
            }
        }
    }
}
