package io.strata.kv;

/**
 * Bytes of one cache entry and how the entries of a page are arranged.
 *
 * <p>With {@code splitScales} a page of {@code n} entries is {@code [n*dataBytes | n*scaleBytes]}: all
 * value rows first, then all scale rows, so the value rows stay at a fixed stride that kernels can load
 * with wide aligned reads. Without it the entries are simply packed.
 *
 * @param name        human name, e.g. {@code fp8_ds_mla}
 * @param dataBytes   value bytes of one entry (for FP8 main: 448 e4m3 + 128 bf16 RoPE = 576)
 * @param scaleBytes  scale bytes of one entry (for FP8 main: 7 ue8m0 + 1 pad = 8), 0 when unscaled
 * @param splitScales whether the page is {@code [n*data | n*scales]}
 */
public record EntryFormat(String name, int dataBytes, int scaleBytes, boolean splitScales) {

    public EntryFormat {
        if (dataBytes <= 0 || scaleBytes < 0) {
            throw new IllegalArgumentException("bad entry format " + name + ": " + dataBytes + "+" + scaleBytes);
        }
    }

    public int entryBytes() {
        return dataBytes + scaleBytes;
    }

    /** Unpadded bytes of {@code entries} entries. */
    public long rawPageBytes(int entries) {
        return (long) entries * entryBytes();
    }

    /** Offset of entry {@code e}'s values inside a page of {@code entries} entries. */
    public int dataOffset(int e, int entries) {
        return splitScales ? e * dataBytes : e * entryBytes();
    }

    /** Offset of entry {@code e}'s scales inside a page of {@code entries} entries. */
    public int scaleOffset(int e, int entries) {
        return splitScales ? entries * dataBytes + e * scaleBytes : e * entryBytes() + dataBytes;
    }

    /** Main/SWA entry for a {@code headDim}-wide shared K=V head whose last {@code ropeDim} channels are rotated. */
    public static EntryFormat main(MainKvDtype dtype, int headDim, int ropeDim) {
        return switch (dtype) {
            case BF16 -> new EntryFormat("bf16", headDim * 2, 0, false);
            case FP8 -> {
                int nope = headDim - ropeDim;
                if (nope % 64 != 0) {
                    throw new IllegalArgumentException("FP8 main KV needs NoPE width divisible by 64, got " + nope);
                }
                int scales = nope / 64;
                int padded = (scales + 7) / 8 * 8;
                yield new EntryFormat("fp8_ds_mla", nope + ropeDim * 2, padded, true);
            }
        };
    }

    /** Indexer key entry of width {@code indexHeadDim}. */
    public static EntryFormat indexer(IndexerKvDtype dtype, int indexHeadDim) {
        return switch (dtype) {
            case BF16 -> new EntryFormat("bf16", indexHeadDim * 2, 0, false);
            case FP8 -> new EntryFormat("fp8_e4m3+fp32_scale", indexHeadDim, 4, true);
            case FP4 -> {
                if (indexHeadDim % 32 != 0) {
                    throw new IllegalArgumentException("MXFP4 indexer needs width divisible by 32, got " + indexHeadDim);
                }
                yield new EntryFormat("mxfp4_e2m1+ue8m0", indexHeadDim / 2, indexHeadDim / 32, true);
            }
        };
    }

    /** Compressor state of one position: fp32 {@code [kv | score]}, each {@code coff*width} wide. */
    public static EntryFormat compressorState(int coff, int width) {
        return new EntryFormat("fp32_kv_score", 2 * coff * width * 4, 0, false);
    }
}
