package io.strata.backend.cpu.ops;

import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * Vector API versions of {@link WeightDecode}: 16 weights per step, bit manipulation instead of table
 * lookups, so decoding keeps up with memory bandwidth. Results are bit-identical to the scalar decoders
 * (tested); rows must be multiples of 16 (32 for FP4), which every V4 shape is.
 */
public final class VectorDecode {
    private static final VectorSpecies<Float> F16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Short> S16 = ShortVector.SPECIES_256;
    private static final float[] E2M1 = Fp4E2m1.decodeTable();
    /** Lane 2j takes lo[j], lane 2j+1 takes hi[j] (a negative index selects from the second vector). */
    private static final VectorShuffle<Float> INTERLEAVE_LOW = interleave(0);
    private static final VectorShuffle<Float> INTERLEAVE_HIGH = interleave(8);

    private static VectorShuffle<Float> interleave(int from) {
        int[] idx = new int[16];
        for (int j = 0; j < 8; j++) {
            idx[2 * j] = from + j;
            idx[2 * j + 1] = from + j - 16;
        }
        return VectorShuffle.fromArray(F16, idx, 0);
    }

    private VectorDecode() {
    }

    /** Whether the vector decoders can handle a row of {@code n} values on this machine. */
    public static boolean supports(int n) {
        return n % 32 == 0 && FloatVector.SPECIES_PREFERRED.length() >= 16;
    }

    public static void bf16Row(MemorySegment w, long byteOff, int n, float[] dst) {
        bf16Row(w, byteOff, n, dst, 0);
    }

    public static void bf16Row(MemorySegment w, long byteOff, int n, float[] dst, int dstOff) {
        for (int i = 0; i < n; i += 16) {
            ShortVector s = ShortVector.fromMemorySegment(S16, w, byteOff + 2L * i, ByteOrder.LITTLE_ENDIAN);
            IntVector bits = (IntVector) s.convertShape(VectorOperators.S2I, I16, 0);
            bits.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, dstOff + i);
        }
    }

    /**
     * e4m3fn bytes times their 128-block scale. Normal codes: shifting the 7 magnitude bits into an fp32
     * and adding 120 to the exponent is exact; exponent-0 codes (zero and subnormals, m·2^-9) come out as
     * 2^-7 + m·2^-10 that way, which {@code 2v − 2^-6} corrects.
     */
    public static void fp8Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] dst) {
        fp8Row(w, byteOff, scale, scaleOff, n, dst, 0);
    }

    public static void fp8Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] dst,
                              int dstOff) {
        IntVector bias = IntVector.broadcast(I16, 120 << 23);
        FloatVector two = FloatVector.broadcast(F16, 2f);
        FloatVector corr = FloatVector.broadcast(F16, -0x1p-6f);
        for (int b = 0; b < n; b += 128) {
            FloatVector s = FloatVector.broadcast(F16,
                E8m0.decode(scale.get(java.lang.foreign.ValueLayout.JAVA_BYTE, scaleOff + b / 128)));
            int end = Math.min(n, b + 128);
            for (int i = b; i < end; i += 16) {
                ByteVector raw = ByteVector.fromMemorySegment(B16, w, byteOff + i, ByteOrder.LITTLE_ENDIAN);
                IntVector v = (IntVector) raw.convertShape(VectorOperators.B2I, I16, 0);
                IntVector mag = v.and(0x7f);
                FloatVector f = mag.lanewise(VectorOperators.LSHL, 20).add(bias).reinterpretAsFloats();
                VectorMask<Integer> sub = mag.compare(VectorOperators.LT, 8);
                f = f.blend(f.fma(two, corr), sub.cast(F16));
                IntVector sign = v.and(0x80).lanewise(VectorOperators.LSHL, 24);
                f = f.reinterpretAsInts().or(sign).reinterpretAsFloats();
                f.mul(s).intoArray(dst, dstOff + i);
            }
        }
    }

    /** Packed e2m1 (low nibble first) times its per-32 scale, through a 16-lane permute of the code table. */
    public static void fp4Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] dst) {
        fp4Row(w, byteOff, scale, scaleOff, n, dst, 0);
    }

    public static void fp4Row(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] dst,
                              int dstOff) {
        FloatVector table = FloatVector.fromArray(F16, E2M1, 0);
        for (int b = 0; b < n; b += 32) {
            float s = E8m0.decode(scale.get(java.lang.foreign.ValueLayout.JAVA_BYTE, scaleOff + b / 32));
            ByteVector raw = ByteVector.fromMemorySegment(B16, w, byteOff + b / 2, ByteOrder.LITTLE_ENDIAN);
            IntVector v = (IntVector) raw.convertShape(VectorOperators.B2I, I16, 0);
            VectorShuffle<Float> loIdx = v.and(0xf).toShuffle().cast(F16);
            VectorShuffle<Float> hiIdx = v.lanewise(VectorOperators.ASHR, 4).and(0xf).toShuffle().cast(F16);
            FloatVector lo = table.rearrange(loIdx).mul(s);
            FloatVector hi = table.rearrange(hiIdx).mul(s);
            lo.rearrange(INTERLEAVE_LOW, hi).intoArray(dst, dstOff + b);
            lo.rearrange(INTERLEAVE_HIGH, hi).intoArray(dst, dstOff + b + 16);
        }
    }

    /**
     * {@code Σ x[i]·w[i]} over an FP8 row without materialising it: the same lane-wise products and the
     * same accumulation order as decoding with {@link #fp8Row} and then {@link VectorMath#dot}, so both paths
     * give identical bits.
     */
    public static float fp8Dot(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] x,
                               int xOff) {
        IntVector bias = IntVector.broadcast(I16, 120 << 23);
        FloatVector two = FloatVector.broadcast(F16, 2f);
        FloatVector corr = FloatVector.broadcast(F16, -0x1p-6f);
        FloatVector acc = FloatVector.zero(F16);
        for (int b = 0; b < n; b += 128) {
            FloatVector s = FloatVector.broadcast(F16,
                E8m0.decode(scale.get(java.lang.foreign.ValueLayout.JAVA_BYTE, scaleOff + b / 128)));
            int end = Math.min(n, b + 128);
            for (int i = b; i < end; i += 16) {
                ByteVector raw = ByteVector.fromMemorySegment(B16, w, byteOff + i, ByteOrder.LITTLE_ENDIAN);
                IntVector v = (IntVector) raw.convertShape(VectorOperators.B2I, I16, 0);
                IntVector mag = v.and(0x7f);
                FloatVector f = mag.lanewise(VectorOperators.LSHL, 20).add(bias).reinterpretAsFloats();
                VectorMask<Integer> sub = mag.compare(VectorOperators.LT, 8);
                f = f.blend(f.fma(two, corr), sub.cast(F16));
                IntVector sign = v.and(0x80).lanewise(VectorOperators.LSHL, 24);
                f = f.reinterpretAsInts().or(sign).reinterpretAsFloats().mul(s);
                acc = FloatVector.fromArray(F16, x, xOff + i).fma(f, acc);
            }
        }
        return VectorMath.sumLanes(acc);
    }

    /** As {@link #fp8Dot} for a packed FP4 row (identical bits to {@link #fp4Row} then a dot). */
    public static float fp4Dot(MemorySegment w, long byteOff, MemorySegment scale, long scaleOff, int n, float[] x,
                               int xOff) {
        FloatVector table = FloatVector.fromArray(F16, E2M1, 0);
        FloatVector acc = FloatVector.zero(F16);
        for (int b = 0; b < n; b += 32) {
            float s = E8m0.decode(scale.get(java.lang.foreign.ValueLayout.JAVA_BYTE, scaleOff + b / 32));
            ByteVector raw = ByteVector.fromMemorySegment(B16, w, byteOff + b / 2, ByteOrder.LITTLE_ENDIAN);
            IntVector v = (IntVector) raw.convertShape(VectorOperators.B2I, I16, 0);
            VectorShuffle<Float> loIdx = v.and(0xf).toShuffle().cast(F16);
            VectorShuffle<Float> hiIdx = v.lanewise(VectorOperators.ASHR, 4).and(0xf).toShuffle().cast(F16);
            FloatVector lo = table.rearrange(loIdx).mul(s);
            FloatVector hi = table.rearrange(hiIdx).mul(s);
            acc = FloatVector.fromArray(F16, x, xOff + b).fma(lo.rearrange(INTERLEAVE_LOW, hi), acc);
            acc = FloatVector.fromArray(F16, x, xOff + b + 16).fma(lo.rearrange(INTERLEAVE_HIGH, hi), acc);
        }
        return VectorMath.sumLanes(acc);
    }

    /** As {@link #fp8Dot} for a bf16 row. */
    public static float bf16Dot(MemorySegment w, long byteOff, int n, float[] x, int xOff) {
        FloatVector acc = FloatVector.zero(F16);
        for (int i = 0; i < n; i += 16) {
            ShortVector s = ShortVector.fromMemorySegment(S16, w, byteOff + 2L * i, ByteOrder.LITTLE_ENDIAN);
            IntVector bits = (IntVector) s.convertShape(VectorOperators.S2I, I16, 0);
            acc = FloatVector.fromArray(F16, x, xOff + i).fma(bits.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(), acc);
        }
        return VectorMath.sumLanes(acc);
    }
}
