package io.strata.platform.engine;

import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.List;

/**
 * Translates the scheduler's chunks into the execution SPI's {@link StepBatch}: token ids, start
 * positions, block tables and the prefix-sharing bounds from the KV cache manager, and which logits
 * rows are wanted.
 */
final class BackendStepExecutor implements StepExecutor {
    private final ModelExecutor executor;
    private final ManagedKvCache kv;
    private final int vocab;

    BackendStepExecutor(ModelExecutor executor, ManagedKvCache kv) {
        this.executor = executor;
        this.kv = kv;
        this.vocab = executor.config().vocabSize();
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
        StepResult result = executor.execute(new StepBatch(batch));
        if (result.vocab() != vocab) {
            throw new IllegalStateException("backend returned logits of width " + result.vocab() + ", expected " + vocab);
        }
        return new Output(result.logits(), result.vocab());
    }
}
