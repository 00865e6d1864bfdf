package io.strata.model.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Round trips for every dtype, and one test per kind of malformed file. */
class SafetensorsFormatTest {

    @TempDir
    Path tmp;

    @Test
    void everyDtypeRoundTripsThroughASingleFileCheckpoint() throws IOException {
        ByteBuffer f16 = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        f16.putShort(Float.floatToFloat16(1.5f)).putShort(Float.floatToFloat16(-65504f));
        ByteBuffer i32 = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(-7).putInt(1 << 30);
        new SafetensorsWriter()
                .addF32("a.f32", new int[] {2, 2}, 1f, -2f, 3.5f, Float.MIN_VALUE)
                .addBf16("b.bf16", new int[] {3}, 1f, -0.5f, 3.0e38f)
                .add("c.f16", DType.F16, new int[] {2}, f16.array())
                .add("d.e4m3", DType.F8_E4M3, new int[] {4}, new byte[] {0x38, (byte) 0xC0, 0x7E, 0x01})
                .add("e.e8m0", DType.F8_E8M0, new int[] {3}, new byte[] {127, (byte) 130, (byte) 0xFF})
                .add("f.i8", DType.I8, new int[] {1, 2}, new byte[] {0x59, 0x07})
                .add("g.i32", DType.I32, new int[] {2}, i32.array())
                .addI64("h.i64", new int[] {2, 1}, Long.MIN_VALUE, 129279L)
                .add("i.empty", DType.F32, new int[] {0, 5}, new byte[0])
                .metadata("format", "pt")
                .write(tmp.resolve(Checkpoint.SINGLE_FILE));

        try (Checkpoint c = Checkpoint.open(tmp)) {
            assertThat(c.size()).isEqualTo(9);
            assertThat(c.files().getFirst().metadata()).containsEntry("format", "pt");
            assertThat(c.tensor("a.f32").toFloatArray()).containsExactly(1f, -2f, 3.5f, Float.MIN_VALUE);
            assertThat(c.tensor("a.f32").rows()).isEqualTo(2);
            assertThat(c.tensor("b.bf16").toFloatArray()).containsExactly(1f, -0.5f, Float.intBitsToFloat(0x7F62_0000));
            assertThat(c.tensor("c.f16").toFloatArray()).containsExactly(1.5f, -65504f);
            assertThat(c.tensor("d.e4m3").toFloatArray()).containsExactly(1f, -2f, 448f, 0x1p-9f);
            float[] e8 = c.tensor("e.e8m0").toFloatArray();
            assertThat(e8[0]).isEqualTo(1f);
            assertThat(e8[1]).isEqualTo(8f);
            assertThat(e8[2]).isNaN();
            assertThat(c.tensor("f.i8").int8(0)).isEqualTo((byte) 0x59);
            assertThat(c.tensor("g.i32").toIntArray()).containsExactly(-7, 1 << 30);
            assertThat(c.tensor("h.i64").toLongArray()).containsExactly(Long.MIN_VALUE, 129279L);
            assertThat(c.tensor("i.empty").elementCount()).isZero();
            assertThat(c.tensor("i.empty").rows()).isZero();
        }
    }

    private Path raw(String header, int dataBytes) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h);
        Path p = tmp.resolve("bad.safetensors");
        Files.write(p, b.array());
        return p;
    }

    private void assertBad(Path file, String tensor, String... fragments) {
        assertThatThrownBy(() -> SafetensorsFile.open(file)).isInstanceOfSatisfying(CheckpointException.class, e -> {
            assertThat(e.file()).isEqualTo(file.toString());
            assertThat(e.tensor()).isEqualTo(tensor);
            assertThat(e.getMessage()).contains(file.toString()).contains(fragments);
        });
    }

    @Test
    void badHeaderLength() throws IOException {
        Path p = tmp.resolve("len.safetensors");
        Files.write(p, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(-5L).array());
        assertBad(p, null, "bad header length");
        Files.write(p, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(1000).array());
        assertBad(p, null, "truncated", "header length 1000");
        Files.write(p, new byte[5]);
        assertBad(p, null, "truncated", "5 bytes");
    }

    @Test
    void badJsonAndWrongShapes() throws IOException {
        assertBad(raw("{\"a\": {\"dtype\": \"F32\"", 0), null, "not valid JSON");
        assertBad(raw("[1, 2, 3]", 0), null, "must be a JSON object");
        assertBad(raw("{\"a\": 5}", 0), "a", "must be an object");
        assertBad(raw("{\"a\": {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                + "\"a\": {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8), null, "Duplicate");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4), "w", "shape[0]");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,4]}}", 4), "w", "'shape'");
        assertBad(raw("{\"w\": {\"shape\":[1],\"data_offsets\":[0,4]}}", 4), "w", "'dtype'");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4), "w", "[begin, end]");
        assertBad(raw("{\"__metadata__\": {\"x\": 1}}", 0), null, "__metadata__");
    }

    @Test
    void unknownDtypeIsNamed() throws IOException {
        assertBad(raw("{\"w\": {\"dtype\":\"F4_E2M1\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1), "w",
                "unknown dtype 'F4_E2M1'");
    }

    @Test
    void offsetsOutOfRangeOrInconsistent() throws IOException {
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8), "w",
                "beyond the data section of 8 bytes");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,12]}}", 16), "w",
                "span 12 bytes", "needs 16");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 16), "w", "end before begin");
        assertBad(raw("{\"w\": {\"dtype\":\"F32\",\"shape\":[65536,65536,65536],\"data_offsets\":[0,4]}}", 4), "w",
                "needs");
    }

    @Test
    void overlappingRangesAreRejected() throws IOException {
        Path p = raw("{\"a\": {\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                + "\"b\": {\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16);
        assertBad(p, "b", "overlap tensor 'a'");
        // an empty tensor between two overlapping ones must not hide the overlap
        Path q = raw("{\"a\": {\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]},"
                + "\"z\": {\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
                + "\"c\": {\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}", 32);
        assertBad(q, "c", "overlap tensor 'a'");
    }

    @Test
    void truncatedDataIsRejected() throws IOException {
        new SafetensorsWriter().addF32("x", new int[] {8}, new float[8]).write(tmp.resolve("t.safetensors"));
        Path p = tmp.resolve("t.safetensors");
        byte[] all = Files.readAllBytes(p);
        Files.write(p, java.util.Arrays.copyOf(all, all.length - 3));
        assertBad(p, "x", "beyond the data section");
    }

    @Test
    void invalidUtf8Header() throws IOException {
        Path p = tmp.resolve("utf.safetensors");
        Files.write(p, ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(4)
                .put(new byte[] {'{', (byte) 0xC3, (byte) 0x28, '}'}).array());
        assertBad(p, null, "UTF-8");
    }
}
