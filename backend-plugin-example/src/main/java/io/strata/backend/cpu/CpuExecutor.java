package io.strata.backend.cpu;

import io.strata.backend.cpu.kv.KvPoolSet;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.kv.PagedLayerCache;
import io.strata.backend.cpu.model.BatchSlice;
import io.strata.backend.cpu.model.ChunkSpan;
import io.strata.backend.cpu.model.CpuModel;
import io.strata.backend.cpu.weights.CheckpointTensors;
import io.strata.kv.KvLayout;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The CPU {@link ModelExecutor}: weights stay memory-mapped from the checkpoint; KV lives in host-memory
 * pools in the layout's exact formats. A step runs all its chunks' rows through the projections and
 * experts together (each weight read once per step) and attention per sequence, on all cores.
 */
public final class CpuExecutor implements ModelExecutor {
    private final CpuModel model;
    private final BackendCapabilities base;
    private KvPoolSet pools;

    CpuExecutor(ModelConfig config, Checkpoint checkpoint, BackendCapabilities base) {
        this.model = new CpuModel(config, new CheckpointTensors(checkpoint.tensors()));
        this.base = base;
    }

    public CpuModel model() {
        return model;
    }

    @Override
    public ModelConfig config() {
        return model.config();
    }

    @Override
    public BackendCapabilities capabilities() {
        long used = pools == null ? 0 : pools.bytes().values().stream().mapToLong(Long::longValue).sum();
        return new BackendCapabilities(Math.max(0, base.kvMemoryBytes() - used), base.mainKvDtypes(),
            base.indexerKvDtypes(), false, base.maxBatchTokens(), base.maxBatchRequests());
    }

    @Override
    public long weightBytes() {
        return model.weightBytes();
    }

    @Override
    public synchronized KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages) {
        base.requireLayout(layout, model.config(), "CPU");
        if (pools != null) {
            pools.close();
        }
        pools = new KvPoolSet(layout, pages);
        return new KvPools(layout, pools.pages(), pools.bytes());
    }

    @Override
    public synchronized StepResult execute(StepBatch batch) {
        if (pools == null) {
            throw new IllegalStateException("allocateKv must be called before execute");
        }
        long t0 = System.nanoTime();
        int vocab = model.config().vocabSize();
        int total = batch.totalTokens();
        int[] tokens = new int[total];
        int[] logitRows = new int[batch.logitRows()];
        List<BatchSlice> slices = new ArrayList<>();
        int row = 0;
        int lr = 0;
        for (int i = 0; i < batch.chunks().size(); i++) {
            SequenceChunk c = batch.chunks().get(i);
            LayerCache[] caches = new LayerCache[model.blocks().size()];
            for (int l = 0; l < caches.length; l++) {
                caches[l] = new PagedLayerCache(pools, l, model.config().compressRatios().get(l), c);
            }
            System.arraycopy(c.tokens(), 0, tokens, row, c.tokens().length);
            for (int r : c.logitRows()) {
                logitRows[lr++] = row + r;
            }
            ChunkSpan span = new ChunkSpan(c.startPosition(), c.tokens().length, c.sharedPrefixPositions(),
                c.windowFloor());
            slices.add(new BatchSlice(row, span, l -> caches[l]));
            row += c.tokens().length;
        }
        float[] logits = new float[logitRows.length * vocab];
        model.forward(tokens, total, slices, logitRows, logits, null);
        return StepResult.of(logits, vocab, batch, System.nanoTime() - t0);
    }

    @Override
    public synchronized void close() {
        if (pools != null) {
            pools.close();
            pools = null;
        }
    }
}
