package io.strata.backend.cpu.kv;

import io.strata.backend.cpu.ops.Bf16;
import io.strata.backend.cpu.ops.Fp4;
import io.strata.backend.cpu.ops.Fp8;
import io.strata.backend.cpu.weights.Layouts;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.MainKvDtype;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Encodes and decodes the KV entry formats of {@link io.strata.kv.EntryFormat} at given byte offsets.
 * The forward pass produces values already on these grids (FP8-simulated NoPE dims, FP4-simulated
 * indexer keys), so encoding them is lossless; {@link #writeMain} verifies that and fails loudly otherwise.
 */
public final class EntryCodec {
    private static final float[] E4M3 = Fp8.decodeTable();
    private static final float[] E2M1 = Fp4.decodeTable();

    private EntryCodec() {
    }

    /**
     * Main/SWA entry. FP8: {@code nope} e4m3 bytes then {@code rope} bf16 values at {@code dataOff}, one
     * ue8m0 scale per 64 NoPE values at {@code scaleOff} (+ pad). BF16: {@code nope + rope} bf16 values.
     */
    public static void writeMain(MemorySegment seg, long dataOff, long scaleOff, MainKvDtype dtype, float[] src,
                                 int off, int headDim, int ropeDim) {
        int nope = headDim - ropeDim;
        if (dtype == MainKvDtype.BF16) {
            for (int i = 0; i < headDim; i++) {
                seg.set(Layouts.SHORT, dataOff + 2L * i, (short) Bf16.roundBits(src[off + i]));
            }
            return;
        }
        for (int b = 0; b < nope; b += 64) {
            float s = Fp8.blockScale(src, off + b, 64);
            seg.set(ValueLayout.JAVA_BYTE, scaleOff + b / 64, (byte) Fp8.encodeE8m0(s));
            for (int i = b; i < b + 64; i++) {
                float q = src[off + i] / s;
                if (Fp8.roundE4m3(q) != q) {
                    throw new IllegalStateException("KV value " + src[off + i] + " is not FP8-simulated (scale " + s + ")");
                }
                seg.set(ValueLayout.JAVA_BYTE, dataOff + i, (byte) Fp8.encodeE4m3(q));
            }
        }
        for (int i = 0; i < ropeDim; i++) {
            seg.set(Layouts.SHORT, dataOff + nope + 2L * i, (short) Bf16.roundBits(src[off + nope + i]));
        }
    }

    public static void readMain(MemorySegment seg, long dataOff, long scaleOff, MainKvDtype dtype, float[] dst,
                                int off, int headDim, int ropeDim) {
        int nope = headDim - ropeDim;
        if (dtype == MainKvDtype.BF16) {
            for (int i = 0; i < headDim; i++) {
                dst[off + i] = Bf16.toFloat(seg.get(Layouts.SHORT, dataOff + 2L * i));
            }
            return;
        }
        for (int b = 0; b < nope; b += 64) {
            float s = Fp8.decodeE8m0(seg.get(ValueLayout.JAVA_BYTE, scaleOff + b / 64));
            for (int i = b; i < b + 64; i++) {
                dst[off + i] = E4M3[seg.get(ValueLayout.JAVA_BYTE, dataOff + i) & 0xff] * s;
            }
        }
        for (int i = 0; i < ropeDim; i++) {
            dst[off + nope + i] = Bf16.toFloat(seg.get(Layouts.SHORT, dataOff + nope + 2L * i));
        }
    }

    /** Indexer key: FP4 (packed e2m1, low nibble first + ue8m0 per 32), FP8 (e4m3 + fp32 scale) or BF16. */
    public static void writeIndexer(MemorySegment seg, long dataOff, long scaleOff, IndexerKvDtype dtype, float[] src,
                                    int off, int dim) {
        switch (dtype) {
            case BF16 -> {
                for (int i = 0; i < dim; i++) {
                    seg.set(Layouts.SHORT, dataOff + 2L * i, (short) Bf16.roundBits(src[off + i]));
                }
            }
            case FP4 -> {
                for (int b = 0; b < dim; b += 32) {
                    float s = Fp4.blockScale(src, off + b, 32);
                    seg.set(ValueLayout.JAVA_BYTE, scaleOff + b / 32, (byte) Fp8.encodeE8m0(s));
                    for (int i = b; i < b + 32; i += 2) {
                        int lo = Fp4.encode(src[off + i] / s);
                        int hi = Fp4.encode(src[off + i + 1] / s);
                        seg.set(ValueLayout.JAVA_BYTE, dataOff + i / 2, (byte) (lo | (hi << 4)));
                    }
                }
            }
            case FP8 -> {
                float s = Fp8.blockScale(src, off, dim);
                seg.set(Layouts.FLOAT, scaleOff, s);
                for (int i = 0; i < dim; i++) {
                    seg.set(ValueLayout.JAVA_BYTE, dataOff + i, (byte) Fp8.encodeE4m3(Fp8.roundE4m3(src[off + i] / s)));
                }
            }
        }
    }

    public static void readIndexer(MemorySegment seg, long dataOff, long scaleOff, IndexerKvDtype dtype, float[] dst,
                                   int off, int dim) {
        switch (dtype) {
            case BF16 -> {
                for (int i = 0; i < dim; i++) {
                    dst[off + i] = Bf16.toFloat(seg.get(Layouts.SHORT, dataOff + 2L * i));
                }
            }
            case FP4 -> {
                for (int b = 0; b < dim; b += 32) {
                    float s = Fp8.decodeE8m0(seg.get(ValueLayout.JAVA_BYTE, scaleOff + b / 32));
                    for (int i = b; i < b + 32; i += 2) {
                        int v = seg.get(ValueLayout.JAVA_BYTE, dataOff + i / 2);
                        dst[off + i] = E2M1[v & 0xf] * s;
                        dst[off + i + 1] = E2M1[(v >> 4) & 0xf] * s;
                    }
                }
            }
            case FP8 -> {
                float s = seg.get(Layouts.FLOAT, scaleOff);
                for (int i = 0; i < dim; i++) {
                    dst[off + i] = E4M3[seg.get(ValueLayout.JAVA_BYTE, dataOff + i) & 0xff] * s;
                }
            }
        }
    }

    /** Compressor state of one position: fp32 {@code [kv(width) | score(width)]}. */
    public static void writeState(MemorySegment seg, long off, float[] kv, int kvOff, float[] score, int scoreOff,
                                  int width) {
        MemorySegment.copy(kv, kvOff, seg, Layouts.FLOAT, off, width);
        MemorySegment.copy(score, scoreOff, seg, Layouts.FLOAT, off + 4L * width, width);
    }

    public static void readState(MemorySegment seg, long off, float[] kv, int kvOff, float[] score, int scoreOff,
                                 int width) {
        MemorySegment.copy(seg, Layouts.FLOAT, off, kv, kvOff, width);
        MemorySegment.copy(seg, Layouts.FLOAT, off + 4L * width, score, scoreOff, width);
    }
}
