package io.strata.backend.cuda.model;

import io.strata.backend.cuda.CudaException;
import io.strata.backend.cuda.CudaRuntime;
import io.strata.backend.cuda.NativeLibrary;
import io.strata.backend.cuda.nat.CudaNative;
import io.strata.kv.IndexerKvDtype;
import io.strata.kv.KvLayout;
import io.strata.kv.MainKvDtype;
import io.strata.kv.PageBucket;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.ModelConfig;
import io.strata.spi.exec.BackendCapabilities;
import io.strata.spi.exec.DeviceMemory;
import io.strata.spi.exec.KvPools;
import io.strata.spi.exec.LoadOptions;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;

/**
 * A model on one GPU: weights uploaded once in their checkpoint formats, the KV pools in device memory,
 * and each step's rows run through {@link DeviceModel} on the default stream. The KV offer is
 * {@code strata.cuda.memory-fraction} of the device memory left free after the weights and a step's
 * activations at the engine's largest batch.
 */
public final class CudaExecutor implements ModelExecutor {
    /** Default share of free device memory (after weights and activations) the KV pools may take. */
    public static final double DEFAULT_MEMORY_FRACTION = 0.9;
    private static final long GIB = 1L << 30;
    private static final int DEVICE = 0;

    private final ModelConfig config;
    private final String device;
    private final WeightStore weights;
    private final DeviceModel model;
    private final Workspace workspace = new Workspace();
    private final HostStaging host = new HostStaging();
    private final BackendCapabilities caps;
    private DeviceKvCache kv;

    private CudaExecutor(ModelConfig config, String device, WeightStore weights, DeviceModel model,
                         BackendCapabilities caps) {
        this.config = config;
        this.device = device;
        this.weights = weights;
        this.model = model;
        this.caps = caps;
    }

    /**
     * Uploads the model to the device.
     *
     * @throws IllegalStateException when the device has too little free memory (the message says how much was
     *                               needed, how much was free, and what to change)
     */
    public static CudaExecutor load(ModelConfig config, Checkpoint checkpoint, LoadOptions options, int maxBatchTokens,
                                    int maxBatchRequests) {
        NativeLibrary.require();
        CudaRuntime.check(CudaNative.strata_cuda_set_device(DEVICE), "cudaSetDevice");
        double fraction = options.fraction("memory-fraction", DEFAULT_MEMORY_FRACTION);
        String device = "cuda:" + DEVICE + " " + CudaRuntime.devices().get(DEVICE).name();
        long weightBytes = checkpoint.tensors().values().stream()
            .filter(t -> !t.name().startsWith("mtp.")).mapToLong(Tensor::byteSize).sum();
        long context = Math.min(config.maxPositionEmbeddings(), 1L << 20);
        long[] mem = memInfo();
        WeightStore store = new WeightStore();
        DeviceModel model;
        try {
            model = new DeviceModel(config, checkpoint, store);
        } catch (CudaException e) {
            store.close();
            throw new IllegalStateException("model " + options.modelId() + " does not fit on " + device + ": its weights"
                + " need " + gib(weightBytes) + " and " + gib(mem[0]) + " were free (" + e.getMessage() + "); free the GPU,"
                + " serve a smaller model, or choose another backend with strata.backend", e);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        long activations = model.activationBytes(maxBatchTokens, (int) (model.window() + Math.max(
            config.indexer().topk(), context / 128))) + (long) maxBatchTokens * (context / 4) * 2;
        long free = memInfo()[0];
        if (free < activations) {
            store.close();
            throw new IllegalStateException("model " + options.modelId() + " does not fit on " + device + ": weights "
                + gib(store.bytes()) + " are resident, a step of strata.engine.max-num-batched-tokens=" + maxBatchTokens
                + " needs " + gib(activations) + " of activations, but only " + gib(free) + " are free; lower"
                + " strata.engine.max-num-batched-tokens or strata.model.max-model-len, or free the GPU");
        }
        long kvOffer = (long) ((free - activations) * fraction);
        BackendCapabilities caps = new BackendCapabilities(kvOffer, EnumSet.of(MainKvDtype.FP8),
            EnumSet.of(IndexerKvDtype.FP4), false, maxBatchTokens, maxBatchRequests);
        return new CudaExecutor(config, device, store, model, caps);
    }

    private static long[] memInfo() {
        long[] free = new long[1];
        long[] total = new long[1];
        CudaRuntime.check(CudaNative.strata_cuda_mem_info(free, total), "cudaMemGetInfo");
        return new long[] {free[0], total[0]};
    }

    private static String gib(long bytes) {
        return bytes >= GIB ? String.format(java.util.Locale.ROOT, "%.2f GiB", bytes / (double) GIB)
            : String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public synchronized BackendCapabilities capabilities() {
        long used = kv == null ? 0 : kv.totalBytes();
        return new BackendCapabilities(Math.max(0, caps.kvMemoryBytes() - used), caps.mainKvDtypes(),
            caps.indexerKvDtypes(), false, caps.maxBatchTokens(), caps.maxBatchRequests());
    }

    @Override
    public long weightBytes() {
        return weights.bytes();
    }

    @Override
    public synchronized KvPools allocateKv(KvLayout layout, Map<PageBucket, Integer> pages) {
        caps.requireLayout(layout, config, "CUDA");
        if (kv != null) {
            kv.close();
            kv = null;
        }
        kv = new DeviceKvCache(layout, pages);
        return new KvPools(layout, kv.pages(), kv.bytes());
    }

    @Override
    public synchronized StepResult execute(StepBatch batch) {
        if (kv == null) {
            throw new IllegalStateException("allocateKv must be called before execute");
        }
        if (batch.totalTokens() > caps.maxBatchTokens()) {
            throw new IllegalArgumentException("step of " + batch.totalTokens() + " tokens exceeds the loaded limit of "
                + caps.maxBatchTokens());
        }
        long t0 = System.nanoTime();
        StepPlan plan = StepPlan.build(batch, kv.layout(), model.ropes(), config.vocabSize(), model.window(), host,
            workspace);
        float[] logits = model.forward(plan, kv, workspace, host, 0);
        CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "step");
        int[] rowStart = new int[batch.chunks().size() + 1];
        int r = 0;
        for (int i = 0; i < batch.chunks().size(); i++) {
            rowStart[i] = r;
            r += batch.chunks().get(i).logitRows().length;
        }
        rowStart[batch.chunks().size()] = r;
        return new StepResult(logits, config.vocabSize(), rowStart, System.nanoTime() - t0);
    }

    /**
     * Layer {@code layer}'s attention sub-layer alone over the rows of {@code batch}, with its input given
     * (bf16 bits, rows × hidden): the module-level view the fixtures record. Caches are read and written as
     * in a step.
     */
    synchronized short[] attentionOnly(int layer, StepBatch batch, short[] x) {
        if (kv == null) {
            throw new IllegalStateException("allocateKv must be called before attentionOnly");
        }
        StepPlan plan = StepPlan.build(batch, kv.layout(), model.ropes(), config.vocabSize(), model.window(), host,
            workspace);
        int dim = config.hiddenSize();
        try (var in = io.strata.backend.cuda.DeviceBuffer.of(x);
             var out = io.strata.backend.cuda.DeviceBuffer.allocate(2L * x.length)) {
            model.attention(layer, plan, kv, workspace, in.address(), out.address(), 0);
            CudaRuntime.check(CudaNative.strata_cuda_synchronize(), "attention");
            return out.downloadShorts(batch.totalTokens() * dim);
        }
    }

    @Override
    public Optional<DeviceMemory> deviceMemory() {
        long[] mem = memInfo();
        long kvBytes;
        long ws;
        synchronized (this) {
            kvBytes = kv == null ? 0 : kv.totalBytes();
            ws = workspace.bytes();
        }
        return Optional.of(new DeviceMemory(device, mem[1], mem[0], weights.bytes(), kvBytes, ws));
    }

    @Override
    public synchronized void close() {
        if (kv != null) {
            kv.close();
            kv = null;
        }
        workspace.close();
        host.close();
        weights.close();
    }
}
