package io.strata.kv;

import java.util.Objects;

/**
 * The KV dtype setting: main/SWA entries and indexer keys. Compressor states are always fp32.
 *
 * @param main    main and SWA KV storage
 * @param indexer indexer key storage
 */
public record KvPrecision(MainKvDtype main, IndexerKvDtype indexer) {

    /** FP8 main + FP4 indexer: the smallest setting that is lossless against the reference. */
    public static final KvPrecision DEFAULT = new KvPrecision(MainKvDtype.FP8, IndexerKvDtype.FP4);

    /** All-bf16: the blog's 9.62 GiB arithmetic. */
    public static final KvPrecision BF16 = new KvPrecision(MainKvDtype.BF16, IndexerKvDtype.BF16);

    public KvPrecision {
        Objects.requireNonNull(main, "main");
        Objects.requireNonNull(indexer, "indexer");
    }

    /** Parses {@code "fp8+fp4"}, {@code "bf16"} (both), {@code "fp8"} (FP8 main, FP4 indexer). */
    public static KvPrecision parse(String text) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        int plus = t.indexOf('+');
        if (plus < 0) {
            MainKvDtype m = MainKvDtype.parse(t);
            return m == MainKvDtype.BF16 ? BF16 : DEFAULT;
        }
        return new KvPrecision(MainKvDtype.parse(t.substring(0, plus)), IndexerKvDtype.parse(t.substring(plus + 1)));
    }

    @Override
    public String toString() {
        return main.name().toLowerCase(java.util.Locale.ROOT) + "+" + indexer.name().toLowerCase(java.util.Locale.ROOT);
    }
}
