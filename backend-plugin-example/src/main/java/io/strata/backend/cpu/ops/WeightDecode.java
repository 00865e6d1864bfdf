package io.strata.backend.cpu.ops;

import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;
import io.strata.backend.cpu.weights.Layouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Dequantizes one weight row from its checkpoint bytes into fp32. */
public final class WeightDecode {
    private static final float[] E4M3 = Fp8E4m3.decodeTable();
    private static final float[] E2M1 = Fp4E2m1.decodeTable();

    private WeightDecode() {
    }

    public static void bf16Row(MemorySegment w, long byteOff, int n, float[] dst) {
        bf16Row(w, byteOff, n, dst, 0);
    }

    public static void bf16Row(MemorySegment w, long byteOff, int n, float[] dst, int dstOff) {
        for (int i = 0; i < n; i++) {
            dst[dstOff + i] = Float.intBitsToFloat((w.get(Layouts.SHORT, byteOff + 2L * i) & 0xffff) << 16);
        }
    }

    /** FP8 row: {@code n} bytes at {@code byteOff}; scales for its 128-blocks start at {@code scaleOff}. */
    public static void fp8Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n,
                              float[] dst, byte[] tmp) {
        fp8Row(w, byteOff, scale, scaleOff, n, dst, 0, tmp);
    }

    public static void fp8Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n,
                              float[] dst, int dstOff, byte[] tmp) {
        MemorySegment.copy(w, ValueLayout.JAVA_BYTE, byteOff, tmp, 0, n);
        for (int b = 0; b < n; b += 128) {
            float s = E8m0.decode(scale.get(ValueLayout.JAVA_BYTE, scaleOff + b / 128));
            int end = Math.min(n, b + 128);
            for (int i = b; i < end; i++) {
                dst[dstOff + i] = E4M3[tmp[i] & 0xff] * s;
            }
        }
    }

    /** FP4 row of {@code n} values ({@code n/2} bytes, low nibble first), one scale per 32. */
    public static void fp4Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n,
                              float[] dst, byte[] tmp) {
        fp4Row(w, byteOff, scale, scaleOff, n, dst, 0, tmp);
    }

    public static void fp4Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n,
                              float[] dst, int dstOff, byte[] tmp) {
        MemorySegment.copy(w, ValueLayout.JAVA_BYTE, byteOff, tmp, 0, n / 2);
        for (int b = 0; b < n; b += 32) {
            float s = E8m0.decode(scale.get(ValueLayout.JAVA_BYTE, scaleOff + b / 32));
            for (int i = b; i < b + 32; i += 2) {
                int v = tmp[i >> 1];
                dst[dstOff + i] = E2M1[v & 0xf] * s;
                dst[dstOff + i + 1] = E2M1[(v >> 4) & 0xf] * s;
            }
        }
    }
}
