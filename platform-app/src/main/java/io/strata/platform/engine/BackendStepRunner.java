package io.strata.platform.engine;

import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PageTable;
import io.strata.platform.workers.RemoteExecutor;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Builds a step's metadata, in one place, and runs it on the backend: for each chunk the token ids, the start
 * position, the block tables (per kind group, the held pages from the table's base on, so a window group's
 * table stays window-sized however long the context), the prefix-sharing bounds, and which logits rows are
 * wanted; all of it read from the sequence's {@link KvRequest} into the execution SPI's {@link StepBatch}.
 * A step the backend fails is rethrown naming the backend (the engine fails that step's sequences with the
 * message). On a device backend it also reads the executor's device memory, at most once a second after a
 * step, on the engine thread, and publishes it for the console and the metrics.
 */
final class BackendStepRunner implements StepRunner {
    private static final long DEVICE_READ_INTERVAL = TimeUnit.SECONDS.toNanos(1);

    private final String backendId;
    private final ModelExecutor executor;
    private final int vocab;
    private final Consumer<DeviceMemory> deviceMemory;
    private final Supplier<Optional<String>> kvLoss;
    private long lastDeviceRead = System.nanoTime();

    /**
     * @param backendId    the plugin id, for error messages
     * @param deviceMemory receives {@link ModelExecutor#deviceMemory()} snapshots; null for a host-memory backend
     */
    BackendStepRunner(String backendId, ModelExecutor executor, Consumer<DeviceMemory> deviceMemory) {
        this(backendId, executor, deviceMemory, Optional::empty);
    }

    /** @param kvLoss reports the executor's KV loss ({@link RemoteExecutor#takeKvLoss()}) */
    BackendStepRunner(String backendId, ModelExecutor executor, Consumer<DeviceMemory> deviceMemory,
                      Supplier<Optional<String>> kvLoss) {
        this.kvLoss = kvLoss;
        this.backendId = backendId;
        this.executor = executor;
        this.vocab = executor.config().vocabSize();
        this.deviceMemory = deviceMemory;
    }

    @Override
    public Optional<String> kvLost() {
        return kvLoss.get();
    }

    @Override
    public Optional<String> down() {
        return executor instanceof RemoteExecutor remote ? remote.down() : Optional.empty();
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
            KvRequest kv = s.kv();
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
            int windowFloor = Math.min(Math.toIntExact(kv.windowValidFrom()), c.start());
            batch.add(new SequenceChunk(s.seqNo, s.tokens(c.start(), c.start() + c.count()), c.start(),
                    blockTables(kv), Math.toIntExact(kv.compressedWriteFrom()), windowFloor, rows, c.argmaxOnly()));
        }
        StepResult result;
        try {
            result = executor.execute(new StepBatch(batch));
        } catch (RuntimeException e) {
            throw new IllegalStateException("the " + backendId + " backend failed the step: " + e.getMessage(), e);
        }
        if (result.vocab() != vocab) {
            throw new IllegalStateException("the " + backendId + " backend returned logits of width " + result.vocab()
                    + ", expected " + vocab);
        }
        readDeviceMemory();
        for (int i = 0; i < chunks.size(); i++) {
            // a backend returns a token only where it was offered the choice
            if (!chunks.get(i).argmaxOnly()) {
                for (int r = result.rowStart()[i]; r < result.rowStart()[i + 1]; r++) {
                    if (result.tokens()[r] >= 0) {
                        throw new IllegalStateException("the " + backendId + " backend returned a token for row " + r
                                + ", whose logits were asked for");
                    }
                }
            }
        }
        return new Output(result);
    }

    /** Per kind group, the pages the request holds from its table's base on, in the SPI's shape. */
    static BlockTable[] blockTables(KvRequest kv) {
        BlockTable[] out = new BlockTable[kv.groups()];
        for (int g = 0; g < out.length; g++) {
            PageTable t = kv.table(g);
            out[g] = new BlockTable(Math.toIntExact(t.base()), t.snapshot());
        }
        return out;
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
