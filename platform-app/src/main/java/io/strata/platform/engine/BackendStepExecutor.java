package io.strata.platform.engine;

import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Translates the scheduler's chunks into the execution SPI's {@link StepBatch}: token ids, start
 * positions, block tables and the prefix-sharing bounds from the KV cache manager, and which logits
 * rows are wanted. A step the backend fails is rethrown naming the backend (the engine fails that step's
 * sequences with the message). On a device backend it also reads the executor's device memory, at most
 * once a second after a step, on the engine thread, and publishes it for the console and the metrics.
 */
final class BackendStepExecutor implements StepExecutor {
    private static final long DEVICE_READ_INTERVAL = TimeUnit.SECONDS.toNanos(1);

    private final String backendId;
    private final ModelExecutor executor;
    private final ManagedKvCache kv;
    private final int vocab;
    private final Consumer<DeviceMemory> deviceMemory;
    private long lastDeviceRead = System.nanoTime();

    /**
     * @param backendId    the plugin id, for error messages
     * @param deviceMemory receives {@link ModelExecutor#deviceMemory()} snapshots; null for a host-memory backend
     */
    BackendStepExecutor(String backendId, ModelExecutor executor, ManagedKvCache kv, Consumer<DeviceMemory> deviceMemory) {
        this.backendId = backendId;
        this.executor = executor;
        this.kv = kv;
        this.vocab = executor.config().vocabSize();
        this.deviceMemory = deviceMemory;
    }

    @Override
    public int vocab() {
        return vocab;
    }

    @Override
    public Output execute(List<Chunk> chunks) {
        List<SequenceChunk> batch = new ArrayList<>(chunks.size());
        for (Chunk c : chunks) {
            Sequence s = c.seq();
            int[] rows = switch (c.logits()) {
                case NONE -> new int[0];
                case LAST -> new int[]{c.count() - 1};
                case ALL -> {
                    int[] all = new int[c.count()];
                    for (int i = 0; i < all.length; i++) {
                        all[i] = i;
                    }
                    yield all;
                }
            };
            int windowFloor = Math.min(kv.windowValidFrom(s), c.start());
            batch.add(new SequenceChunk(s.seqNo, s.tokens(c.start(), c.start() + c.count()), c.start(),
                    kv.blockTables(s), kv.compressedWriteFrom(s), windowFloor, rows));
        }
        StepBatch step = new StepBatch(batch);
        StepResult result;
        try {
            result = executor.execute(step);
        } catch (RuntimeException e) {
            throw new IllegalStateException("the " + backendId + " backend failed the step: " + e.getMessage(), e);
        }
        if (result.vocab() != vocab) {
            throw new IllegalStateException("the " + backendId + " backend returned logits of width " + result.vocab()
                    + ", expected " + vocab);
        }
        readDeviceMemory();
        return new Output(result.logits(), result.vocab());
    }

    private void readDeviceMemory() {
        long now = System.nanoTime();
        if (deviceMemory == null || now - lastDeviceRead < DEVICE_READ_INTERVAL) {
            return;
        }
        lastDeviceRead = now;
        try {
            executor.deviceMemory().ifPresent(deviceMemory);
        } catch (RuntimeException e) {
            // a display value; the step itself succeeded
        }
    }
}
