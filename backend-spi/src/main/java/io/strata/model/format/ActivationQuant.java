package io.strata.model.format;

/**
 * The reference's activation-quantization simulation ({@code act_quant} / {@code fp4_act_quant} of kernel.py
 * v2), shared by every backend so CPU and GPU round identically.
 *
 * <p>Per block of {@code blockSize} consecutive values (one token, one channel block):
 * <ol>
 *   <li>amax = max|x|, floored at 1e-4 (FP8) or 6·2^-126 (FP4);</li>
 *   <li>scale s = the smallest power of two ≥ amax / max (max = 448 for e4m3, 6 for e2m1) — a ue8m0 scale
 *       taken from the float's bits (exponent, plus one if any mantissa bit is set);</li>
 *   <li>q = round-to-nearest-even(x / s) in e4m3 (saturating at ±448) or e2m1 (ties to even, ±6);</li>
 *   <li>the simulated value is q·s (exact: s is a power of two), which is what the reference writes back
 *       in place (KV cache, indexer) and what its FP8/FP4 GEMMs effectively multiply.</li>
 * </ol>
 * The kernel computes amax·(1/max) where the fallback divides; the two give the same power of two for every
 * float (checked exhaustively around each power-of-two boundary in the tests).
 *
 * <p>Block sizes the model uses: 128 before FP8/FP4 matmuls (per token, per 128 input channels), 64 on the
 * 448 non-rotated KV channels, 32 for the indexer's FP4 (after the Hadamard rotation).
 */
public final class ActivationQuant {

    /** Input-channel block of the FP8 / FP4 GEMM activation scales. */
    public static final int GEMM_BLOCK = 128;
    /** Block of the in-place FP8 simulation of the main KV cache's non-rotated channels. */
    public static final int KV_BLOCK = 64;
    /** Block of the indexer's in-place FP4 simulation. */
    public static final int FP4_BLOCK = 32;
    public static final float FP8_AMAX_FLOOR = 1e-4f;
    public static final float FP4_AMAX_FLOOR = 6f * 0x1p-126f;

    private ActivationQuant() {
    }

    /** The ue8m0 scale of an FP8 block with the given absolute maximum. */
    public static float fp8Scale(float amax) {
        return E8m0.ceilPowerOfTwo(Math.max(amax, FP8_AMAX_FLOOR) / Fp8E4m3.MAX);
    }

    /** The ue8m0 scale of an FP4 block with the given absolute maximum. */
    public static float fp4Scale(float amax) {
        return E8m0.ceilPowerOfTwo(Math.max(amax, FP4_AMAX_FLOOR) / Fp4E2m1.MAX);
    }

    /** The FP8 ue8m0 scale of the block {@code x[off, off+len)}. */
    public static float fp8BlockScale(float[] x, int off, int len) {
        return fp8Scale(absMax(x, off, len));
    }

    /** The FP4 ue8m0 scale of the block {@code x[off, off+len)}. */
    public static float fp4BlockScale(float[] x, int off, int len) {
        return fp4Scale(absMax(x, off, len));
    }

    public static float absMax(float[] x, int off, int len) {
        float amax = 0f;
        for (int i = off; i < off + len; i++) {
            amax = Math.max(amax, Math.abs(x[i]));
        }
        return amax;
    }

    /**
     * Replaces {@code x[off, off+len)} by its FP8 quantize-dequantize, block by block. {@code len} must be a
     * multiple of {@code blockSize}.
     */
    public static void fp8RoundTrip(float[] x, int off, int len, int blockSize) {
        checkBlocks(len, blockSize);
        for (int b = off; b < off + len; b += blockSize) {
            float s = fp8Scale(absMax(x, b, blockSize));
            float inverse = 1f / s; // exact: s is a power of two ≥ 2^-22
            for (int i = b; i < b + blockSize; i++) {
                x[i] = Fp8E4m3.decode(Fp8E4m3.encode(x[i] * inverse)) * s;
            }
        }
    }

    /** Replaces {@code x[off, off+len)} by its FP4 e2m1 quantize-dequantize, block by block. */
    public static void fp4RoundTrip(float[] x, int off, int len, int blockSize) {
        checkBlocks(len, blockSize);
        for (int b = off; b < off + len; b += blockSize) {
            float s = fp4Scale(absMax(x, b, blockSize));
            float inverse = 1f / s; // exact: s is a power of two ≥ 2^-126
            for (int i = b; i < b + blockSize; i++) {
                x[i] = Fp4E2m1.round(x[i] * inverse) * s;
            }
        }
    }

    /**
     * Quantizes {@code x[off, off+len)} to e4m3 codes ({@code codes[codeOff..]}) with one power-of-two scale
     * per block ({@code scales[scaleOff..]}), for backends that run a real FP8 GEMM.
     */
    public static void fp8Quantize(float[] x, int off, int len, int blockSize, byte[] codes, int codeOff,
                                   float[] scales, int scaleOff) {
        checkBlocks(len, blockSize);
        for (int b = 0; b < len / blockSize; b++) {
            int start = off + b * blockSize;
            float s = fp8Scale(absMax(x, start, blockSize));
            scales[scaleOff + b] = s;
            for (int i = 0; i < blockSize; i++) {
                codes[codeOff + b * blockSize + i] = Fp8E4m3.encode(x[start + i] / s);
            }
        }
    }

    /**
     * Quantizes {@code x[off, off+len)} to packed e2m1 (two per byte, low nibble = even element) with one
     * ue8m0 scale byte per block — the 68-byte indexer-cache entry for a 128-wide row.
     */
    public static void fp4Quantize(float[] x, int off, int len, int blockSize, byte[] packed, int packedOff,
                                   byte[] scaleCodes, int scaleOff) {
        checkBlocks(len, blockSize);
        if (blockSize % 2 != 0) {
            throw new IllegalArgumentException("FP4 block size must be even, got " + blockSize);
        }
        for (int b = 0; b < len / blockSize; b++) {
            int start = off + b * blockSize;
            float s = fp4Scale(absMax(x, start, blockSize));
            scaleCodes[scaleOff + b] = E8m0.encode(s);
            for (int i = 0; i < blockSize; i += 2) {
                packed[packedOff + (b * blockSize + i) / 2] = Fp4E2m1.pack(Fp4E2m1.encode(x[start + i] / s),
                        Fp4E2m1.encode(x[start + i + 1] / s));
            }
        }
    }

    private static void checkBlocks(int len, int blockSize) {
        if (blockSize <= 0 || len % blockSize != 0) {
            throw new IllegalArgumentException("length " + len + " is not a multiple of block size " + blockSize);
        }
    }
}
