package io.strata.backend.cuda;

import io.strata.backend.cpu.kv.EntryCodec;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.MainKvDtype;
import io.strata.model.format.ActivationQuant;
import io.strata.model.format.Bf16;

import java.lang.foreign.MemorySegment;
import java.util.Random;

/**
 * A host copy of one kind's paged pool, written and read with the CPU backend's entry codec (so the bytes
 * are exactly what the CPU backend stores), uploaded whole for the kernels.
 */
final class PagedEntries {
    final EntryLayout layout;
    final byte[] bytes;
    private final MemorySegment seg;
    private final boolean main;

    PagedEntries(EntryLayout layout, int pages, boolean main) {
        this.layout = layout;
        this.bytes = new byte[Math.toIntExact(layout.pageBytes() * pages)];
        this.seg = MemorySegment.ofArray(bytes);
        this.main = main;
    }

    /** A random 512-wide KV row as the reference stores it: FP8-simulated NoPE part, bf16 RoPE part. */
    static float[] mainRow(Random rnd) {
        float[] x = new float[512];
        for (int b = 0; b < 7; b++) {
            float mag = (float) Math.pow(2, rnd.nextInt(6) - 3);
            for (int i = b * 64; i < b * 64 + 64; i++) {
                x[i] = (float) rnd.nextGaussian() * mag;
            }
        }
        for (int i = 448; i < 512; i++) {
            x[i] = Bf16.round((float) rnd.nextGaussian());
        }
        ActivationQuant.fp8RoundTrip(x, 0, 448, 64);
        return x;
    }

    /** A random 128-wide indexer key as the reference stores it: FP4-simulated, one scale per 32. */
    static float[] indexerRow(Random rnd) {
        return indexerRow(rnd, 1f);
    }

    /** An indexer row whose second 32-channel block is {@code block1} times larger than the rest. */
    static float[] indexerRow(Random rnd, float block1) {
        float[] x = new float[128];
        for (int i = 0; i < 128; i++) {
            x[i] = Bf16.round((float) rnd.nextGaussian() * (i / 32 == 1 ? block1 : 1f));
        }
        ActivationQuant.fp4RoundTrip(x, 0, 128, 32);
        return x;
    }

    void write(long slot, float[] row) {
        if (main) {
            EntryCodec.writeMain(seg, layout.dataOffset(slot), layout.scaleOffset(slot), MainKvDtype.FP8, row, 0, 512, 64);
        } else {
            EntryCodec.writeIndexer(seg, layout.dataOffset(slot), layout.scaleOffset(slot), IndexerKvDtype.FP4, row, 0, 128);
        }
    }

    /** The entry as the CPU backend reads it back (dequantised). */
    float[] read(long slot) {
        float[] x = new float[main ? 512 : 128];
        if (main) {
            EntryCodec.readMain(seg, layout.dataOffset(slot), layout.scaleOffset(slot), MainKvDtype.FP8, x, 0, 512, 64);
        } else {
            EntryCodec.readIndexer(seg, layout.dataOffset(slot), layout.scaleOffset(slot), IndexerKvDtype.FP4, x, 0, 128);
        }
        return x;
    }

    DeviceBuffer upload() {
        return DeviceBuffer.of(bytes);
    }
}
