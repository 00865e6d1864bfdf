package io.strata.platform.engine;

import io.strata.kv.BucketLayout;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.KvLayout;
import io.strata.kv.MainKvDtype;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.config.ModelConfig;
import io.strata.spi.BackendIdentity;
import io.strata.spi.BackendProvider;
import io.strata.spi.DeviceInfo;
import io.strata.spi.ProbeResult;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.ExecutionBackend;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * A test-only execution backend on a pretend accelerator: its executor computes nothing (the next token
 * depends only on the previous one and the position, favouring plain byte tokens, so greedy runs are
 * reproducible) and throws, like a CUDA error in a kernel, on the one step a test arms. It reports device
 * memory, so the console's and the metrics' device paths run.
 */
final class FlakyBackend implements BackendProvider, ExecutionBackend {
    static final String DEVICE = "test:0 Pretend accelerator";
    static final long TOTAL = 80L << 30;
    static final long WEIGHTS = 1L << 30;
    static final long WORKSPACE = 64L << 20;

    final AtomicInteger steps = new AtomicInteger();
    private final AtomicReference<Predicate<StepBatch>> failNext = new AtomicReference<>();
    private volatile long kvBytes;
    private volatile long stepDelayMillis;

    /** The next step that matches throws (once). */
    void failNextStepWhere(Predicate<StepBatch> step) {
        failNext.set(step);
    }

    boolean armed() {
        return failNext.get() != null;
    }

    void stepDelay(long millis) {
        stepDelayMillis = millis;
    }

    @Override
    public BackendIdentity identity() {
        return new BackendIdentity("flaky", "Flaky accelerator (test)", "Test", "1.0.0");
    }

    @Override
    public ProbeResult probe() {
        return ProbeResult.available(List.of(new DeviceInfo(0, DEVICE, TOTAL, TOTAL, Map.of())), Set.of("execution"));
    }

    @Override
    public int priority() {
        return 100;
    }

    @Override
    public BackendCapabilities capabilities() {
        return new BackendCapabilities(256L << 20, EnumSet.allOf(MainKvDtype.class), EnumSet.allOf(IndexerKvDtype.class),
                false, 8192, 256);
    }

    @Override
    public ModelExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options) {
        return new ModelExecutor() {
            @Override
            public ModelConfig config() {
                return config;
            }

            @Override
            public BackendCapabilities capabilities() {
                return FlakyBackend.this.capabilities();
            }

            @Override
            public long weightBytes() {
                return WEIGHTS;
            }

            @Override
            public KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages) {
                Map<PageBucket, Long> bytes = new EnumMap<>(PageBucket.class);
                for (BucketLayout b : layout.buckets()) {
                    bytes.put(b.bucket(), pages.getOrDefault(b.bucket(), 0) * b.rowBytes());
                }
                KvPools pools = new KvPools(layout, pages, bytes);
                kvBytes = pools.totalBytes();
                return pools;
            }

            @Override
            public StepResult execute(StepBatch batch) {
                steps.incrementAndGet();
                if (stepDelayMillis > 0) {
                    try {
                        Thread.sleep(stepDelayMillis);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                Predicate<StepBatch> fail = failNext.get();
                if (fail != null && fail.test(batch) && failNext.compareAndSet(fail, null)) {
                    throw new IllegalStateException("CUDA error 700 (cudaErrorIllegalAddress): an illegal memory access "
                            + "was encountered in sparse_attention_decode");
                }
                int vocab = config.vocabSize();
                float[] logits = new float[batch.logitRows() * vocab];
                int[] rowStart = new int[batch.chunks().size() + 1];
                int row = 0;
                for (int c = 0; c < batch.chunks().size(); c++) {
                    SequenceChunk chunk = batch.chunks().get(c);
                    rowStart[c] = row;
                    for (int r : chunk.logitRows()) {
                        fill(logits, row++ * vocab, vocab, chunk.tokens()[r], chunk.startPosition() + r);
                    }
                }
                rowStart[batch.chunks().size()] = row;
                return StepResult.of(logits, vocab, rowStart, 0);
            }

            @Override
            public Optional<DeviceMemory> deviceMemory() {
                long used = WEIGHTS + kvBytes + WORKSPACE;
                return Optional.of(new DeviceMemory(DEVICE, TOTAL, TOTAL - used, WEIGHTS, kvBytes, WORKSPACE));
            }

            @Override
            public void close() {
            }
        };
    }

    private static void fill(float[] logits, int off, int vocab, int prev, int pos) {
        int favourite = 14 + Math.floorMod(prev * 31 + pos * 7 + 5, 90);
        for (int i = 0; i < vocab; i++) {
            logits[off + i] = i < 14 ? -20f : -Math.abs(i - favourite) * 0.05f;
        }
        logits[off + favourite] = 4f;
    }
}
