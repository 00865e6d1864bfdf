package io.strata.backend.cpu.ops;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The vector decoders give exactly the scalar decoders' values, every code included. */
class VectorDecodeTest {

    @Test
    void fp8Fp4AndBf16RowsMatchTheScalarDecoders() {
        int n = 512;
        Random r = new Random(3);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment w = arena.allocate(2L * n);
            MemorySegment s = arena.allocate(64);
            for (int i = 0; i < 2 * n; i++) {
                int b = i < 256 ? i : r.nextInt(256);
                if ((b & 0x7f) == 0x7f) {
                    b = 0x7e; // skip NaN codes
                }
                w.set(ValueLayout.JAVA_BYTE, i, (byte) b);
            }
            for (int i = 0; i < 64; i++) {
                s.set(ValueLayout.JAVA_BYTE, i, (byte) (110 + r.nextInt(30)));
            }
            float[] a = new float[n];
            float[] b = new float[n];
            WeightDecode.fp8Row(w, 0, s, 0, n, a, new byte[n]);
            VectorDecode.fp8Row(w, 0, s, 0, n, b);
            assertThat(b).containsExactly(a);
            WeightDecode.fp4Row(w, 0, s, 0, n, a, new byte[n / 2]);
            VectorDecode.fp4Row(w, 0, s, 0, n, b);
            assertThat(b).containsExactly(a);
            float[] x = new float[n];
            for (int i = 0; i < n; i++) {
                x[i] = (float) r.nextGaussian();
            }
            VectorDecode.fp8Row(w, 0, s, 0, n, b);
            assertThat(VectorDecode.fp8Dot(w, 0, s, 0, n, x, 0)).isEqualTo(VectorMath.dot(x, 0, b, 0, n));
            VectorDecode.fp4Row(w, 0, s, 0, n, b);
            assertThat(VectorDecode.fp4Dot(w, 0, s, 0, n, x, 0)).isEqualTo(VectorMath.dot(x, 0, b, 0, n));
            VectorDecode.bf16Row(w, 0, 256, b);
            assertThat(VectorDecode.bf16Dot(w, 0, 256, x, 0)).isEqualTo(VectorMath.dot(x, 0, b, 0, 256));
            WeightDecode.bf16Row(w, 0, n, a);
            VectorDecode.bf16Row(w, 0, n, b);
            for (int i = 0; i < n; i++) {
                assertThat(Float.floatToRawIntBits(b[i])).isEqualTo(Float.floatToRawIntBits(a[i]));
            }
        }
    }
}
