package io.strata.platform.engine;

import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PageTable;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds a step's metadata, in one place, and runs it on the backend: for each chunk the token ids, the start
 * position, the block tables (per kind group, the held pages from the table's base on, so a window group's
 * table stays window-sized however long the context), the prefix-sharing bounds, and which logits rows are
 * wanted; all of it read from the sequence's {@link KvRequest} into the execution SPI's {@link StepBatch}.
 */
final class BackendStepRunner implements StepRunner {
    private final ModelExecutor executor;
    private final int vocab;

    BackendStepRunner(ModelExecutor executor) {
        this.executor = executor;
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
                    blockTables(kv), Math.toIntExact(kv.compressedWriteFrom()), windowFloor, rows));
        }
        StepResult result = executor.execute(new StepBatch(batch));
        if (result.vocab() != vocab) {
            throw new IllegalStateException("backend returned logits of width " + result.vocab() + ", expected " + vocab);
        }
        return new Output(result.logits(), result.vocab());
    }

    /** Per kind group, the pages the request holds from its table's base on, in the SPI's shape. */
    static BlockTable[] blockTables(KvRequest kv) {
        BlockTable[] out = new BlockTable[kv.groups()];
        for (int g = 0; g < out.length; g++) {
            PageTable t = kv.table(g);
            out[g] = new BlockTable(Math.toIntExact(t.base()), t.toArray());
        }
        return out;
    }
}
