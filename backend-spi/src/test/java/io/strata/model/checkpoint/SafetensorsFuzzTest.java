package io.strata.model.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Corrupts a valid file at random (header bytes, header length, truncation, edited offsets/shapes/dtypes) and
 * checks the only outcomes are a clean open whose every tensor reads within bounds, or a
 * {@link CheckpointException} that names the file. Any other exception — or a JVM crash — fails.
 */
class SafetensorsFuzzTest {

    private static Path dir;
    private static byte[] valid;
    private static int headerEnd;

    @BeforeContainer
    static void buildValidFile() throws IOException {
        dir = Files.createTempDirectory("st-fuzz");
        Path p = dir.resolve("valid.safetensors");
        new SafetensorsWriter()
                .addF32("layers.0.f32", new int[] {3, 4}, new float[12])
                .addBf16("layers.0.bf16", new int[] {5}, 1, 2, 3, 4, 5)
                .add("layers.0.fp8", DType.F8_E4M3, new int[] {2, 3}, new byte[] {1, 2, 3, 4, 5, 6})
                .add("layers.0.fp4", DType.I8, new int[] {2, 2}, new byte[] {1, 2, 3, 4})
                .addI64("layers.0.ids", new int[] {3}, 1, 2, 3)
                .write(p);
        valid = Files.readAllBytes(p);
        headerEnd = 8 + (int) ByteBuffer.wrap(valid).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    @AfterContainer
    static void cleanUp() throws IOException {
        try (var files = Files.list(dir)) {
            files.forEach(f -> f.toFile().delete());
        }
        Files.deleteIfExists(dir);
    }

    @Property(tries = 400)
    void flippedHeaderBytes(@ForAll @IntRange(min = 0, max = 100_000) int position, @ForAll byte value,
                            @ForAll @IntRange(min = 1, max = 4) int flips) {
        byte[] b = valid.clone();
        for (int i = 0; i < flips; i++) {
            b[(position + 37 * i) % headerEnd] = (byte) (value + i);
        }
        check(b, "flip");
    }

    @Property(tries = 200)
    void truncations(@ForAll @IntRange(min = 0, max = 100_000) int length) {
        check(Arrays.copyOf(valid, length % (valid.length + 1)), "trunc");
    }

    @Property(tries = 200)
    void forgedHeaderLength(@ForAll long length) {
        byte[] b = valid.clone();
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, length);
        check(b, "len");
    }

    @Property(tries = 300)
    void editedNumbersInTheHeader(@ForAll @IntRange(min = 0, max = 1000) int which,
                                  @ForAll @IntRange(min = -3, max = 2_000_000) int replacement) {
        String header = new String(valid, 8, headerEnd - 8, StandardCharsets.UTF_8);
        var m = java.util.regex.Pattern.compile("\\d+").matcher(header);
        var spans = new java.util.ArrayList<int[]>();
        while (m.find()) {
            spans.add(new int[] {m.start(), m.end()});
        }
        int[] span = spans.get(which % spans.size());
        String edited = header.substring(0, span[0]) + replacement + header.substring(span[1]);
        check(withHeader(edited), "num");
    }

    @Property(tries = 100)
    void editedDtypes(@ForAll @IntRange(min = 0, max = 4) int which, @ForAll("dtypeNames") String dtype) {
        String header = new String(valid, 8, headerEnd - 8, StandardCharsets.UTF_8);
        var m = java.util.regex.Pattern.compile("\"dtype\":\"([A-Z0-9_]+)\"").matcher(header);
        for (int i = 0; i <= which && m.find(); i++) {
            if (i == which) {
                header = header.substring(0, m.start(1)) + dtype + header.substring(m.end(1));
            }
        }
        check(withHeader(header), "dtype");
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> dtypeNames() {
        return net.jqwik.api.Arbitraries.of("F32", "BF16", "F16", "F8_E4M3", "F8_E8M0", "I8", "I32", "I64", "U8",
                "F64", "BOOL", "F8_E5M2", "", "f32");
    }

    private byte[] withHeader(String header) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        byte[] data = Arrays.copyOfRange(valid, headerEnd, valid.length);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h).put(data);
        return b.array();
    }

    private void check(byte[] bytes, String kind) {
        Path p = dir.resolve(kind + ".safetensors");
        try {
            Files.write(p, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            for (Tensor t : f.tensors().values()) {
                byte[] all = new byte[(int) t.byteSize()];
                t.readBytes(0, all, 0, all.length);
                if (t.elementCount() > 0) {
                    t.getFloat(t.elementCount() - 1);
                }
                assertThat(t.segment().byteSize()).isEqualTo(t.elementCount() * t.dtype().byteSize());
            }
        } catch (CheckpointException e) {
            assertThat(e.getMessage()).startsWith(p.toString()).hasSizeGreaterThan(p.toString().length() + 10);
        }
    }
}
