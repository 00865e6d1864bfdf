package io.strata.backend.cpu.kv;

import io.strata.model.format.ActivationQuant;
import io.strata.model.format.E8m0;
import io.strata.model.format.Fp4E2m1;
import io.strata.model.format.Fp8E4m3;
import io.strata.model.format.Bf16;
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
    private static final float[] E4M3 = Fp8E4m3.decodeTable();
    private static final float[] E2M1 = Fp4E2m1.decodeTable();

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
                seg.set(Layouts.SHORT, dataOff + 2L * i, Bf16.fromFloat(src[off + i]));
            }
            return;
        }
        for (int b = 0; b < nope; b += 64) {
            float s = ActivationQuant.fp8BlockScale(src, off + b, 64);
            seg.set(ValueLayout.JAVA_BYTE, scaleOff + b / 64, E8m0.encode(s));
            for (int i = b; i < b + 64; i++) {
                float q = src[off + i] / s;
                if (Fp8E4m3.round(q) != q) {
                    throw new IllegalStateException("KV value " + src[off + i] + " is not FP8-simulated (scale " + s + ")");
                }
                seg.set(ValueLayout.JAVA_BYTE, dataOff + i, Fp8E4m3.encode(q));
            }
        }
        for (int i = 0; i < ropeDim; i++) {
            seg.set(Layouts.SHORT, dataOff + nope + 2L * i, Bf16.fromFloat(src[off + nope + i]));
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
            float s = E8m0.decode(seg.get(ValueLayout.JAVA_BYTE, scaleOff + b / 64));
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
                    seg.set(Layouts.SHORT, dataOff + 2L * i, Bf16.fromFloat(src[off + i]));
                }
            }
            case FP4 -> {
                for (int b = 0; b < dim; b += 32) {
                    float s = ActivationQuant.fp4BlockScale(src, off + b, 32);
                    seg.set(ValueLayout.JAVA_BYTE, scaleOff + b / 32, E8m0.encode(s));
                    for (int i = b; i < b + 32; i += 2) {
                        int lo = fp4Code(src[off + i], s);
                        int hi = fp4Code(src[off + i + 1], s);
                        seg.set(ValueLayout.JAVA_BYTE, dataOff + i / 2, Fp4E2m1.pack(lo, hi));
                    }
                }
            }
            case FP8 -> {
                float s = ActivationQuant.fp8BlockScale(src, off, dim);
                seg.set(Layouts.FLOAT, scaleOff, s);
                for (int i = 0; i < dim; i++) {
                    seg.set(ValueLayout.JAVA_BYTE, dataOff + i, Fp8E4m3.encode(src[off + i] / s));
                }
            }
        }
    }

    /** The e2m1 code of an indexer value already FP4-simulated with scale {@code s}; anything else is a bug upstream. */
    private static int fp4Code(float value, float s) {
        float q = value / s;
        if (Fp4E2m1.round(q) != q) {
            throw new IllegalStateException("indexer value " + value + " is not FP4-simulated (scale " + s + ")");
        }
        return Fp4E2m1.encode(q);
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
                    float s = E8m0.decode(seg.get(ValueLayout.JAVA_BYTE, scaleOff + b / 32));
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
