package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.DeviceBuffer;
import io.strata.backend.cuda.RopeTables;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.model.config.RopeConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One rotary configuration's rows {@code [cos | sin]} for every position from 0 up to the highest a step has
 * reached, on the device. Each row is computed once on the host ({@link RopeTables}, bit for bit the rows the
 * kernels always got) and a step only gathers its tokens' rows on the device ({@code strata_rope_gather}), so the
 * host does no trigonometry per step — 64 double-precision sin/cos per token and configuration, most of what
 * building a 256-token decode plan cost. The table grows by doubling as positions reach past it; it is read only
 * by the gather, which runs outside the decode graphs, so its address may change.
 */
final class DeviceRopeTable implements AutoCloseable {
    private static final int MIN_POSITIONS = 4096;
    /** Rows are filled this many positions ahead, so a decode step past the fill is rare (and pays the sync). */
    private static final int FILL_STEP = 1024;
    private static final int HOST_TO_DEVICE = 1;
    private static final int DEVICE_TO_DEVICE = 3;
    private final RopeConfig config;
    private final float[] freqs;
    private DeviceBuffer rows;
    private int capacity;
    private int filled;

    DeviceRopeTable(RopeConfig config) {
        this.config = config;
        this.freqs = config.inverseFrequencies();
    }

    RopeConfig config() {
        return config;
    }

    /** Floats per row: cos then sin of each frequency. */
    int rowFloats() {
        return 2 * freqs.length;
    }

    /**
     * Device address of the rows, holding at least positions {@code [0, positions)}. New rows are filled up to the
     * next multiple of {@link #FILL_STEP} and copied with a device-wide synchronisation after the copy (no queued
     * kernel reads past the old fill, but the copy from pageable memory may still be in flight when it returns);
     * growing waits for the device first, since queued gathers may still read the old buffer.
     */
    long ensure(int positions) {
        if (positions > filled) {
            long rowBytes = 4L * rowFloats();
            int target = (int) Math.min(Integer.MAX_VALUE, ((long) positions + FILL_STEP - 1) / FILL_STEP * FILL_STEP);
            if (target > capacity) {
                long grown = Math.max(MIN_POSITIONS, capacity);
                while (grown < target) {
                    grown *= 2;
                }
                grown = Math.min(grown, Integer.MAX_VALUE);
                DeviceBuffer bigger = DeviceBuffer.allocate(grown * rowBytes);
                if (rows != null) {
                    CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "cudaDeviceSynchronize (RoPE table growth)");
                    CudaRuntime.check(CudaNative.strata_cuda_memcpy(bigger.address(), rows.address(), filled * rowBytes,
                        DEVICE_TO_DEVICE), "cudaMemcpy RoPE table");
                    rows.close();
                }
                rows = bigger;
                capacity = (int) grown;
            }
            float[] fresh = RopeTables.rows(freqs, filled, target);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment seg = arena.allocate(4L * fresh.length, 16);
                MemorySegment.copy(fresh, 0, seg, ValueLayout.JAVA_FLOAT, 0, fresh.length);
                CudaRuntime.check(CudaNative.strata_cuda_memcpy(rows.address() + filled * rowBytes, seg.address(),
                    4L * fresh.length, HOST_TO_DEVICE), "cudaMemcpy RoPE rows");
            }
            CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "cudaDeviceSynchronize (RoPE rows)");
            filled = target;
        }
        return rows.address();
    }

    /** Device bytes the table holds. */
    long bytes() {
        return rows == null ? 0 : rows.bytes();
    }

    @Override
    public void close() {
        if (rows != null) {
            rows.close();
            rows = null;
            capacity = 0;
            filled = 0;
        }
    }
}
